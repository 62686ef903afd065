//! Distils the static model from a transformer (`lore embedder distill`): all-MiniLM-L6-v2 (the
//! `minilm` feature) or multilingual-e5-small (the `e5` feature).
//!
//! Recipe: every token of the static model's WordPiece vocabulary is run through the teacher
//! alone and mean-pooled; the table is centred and projected on its top principal components;
//! each row is scaled by a SIF weight `a / (a + p)`, with `p` a Zipf estimate from the token's
//! rank in the vocabulary (WordPiece vocabularies list frequent tokens first); rows are quantised
//! to `i8`. The copyability threshold is calibrated on sentence pairs: the static cosine that
//! corresponds to the teacher's own near-duplicate cosine (least-squares fit), and likewise the
//! relevance floor from the teacher's query-to-text cosines.

use super::static_model::{StaticEmbedder, StaticHeader};
use super::{Embedder, content_hash, dot};
use crate::error::{Error, Result};

/// A transformer the static model can be distilled from.
pub trait Teacher: Embedder {
    /// The model's name (the static model is named after it).
    fn model_name(&self) -> &str;

    /// How a vocabulary token is fed to the model, for the recipe.
    fn feeding(&self) -> &str;

    /// Each token of a WordPiece vocabulary (in id order) alone through the model, mean-pooled,
    /// not normalised.
    fn token_rows(&self, tokens: &[String]) -> Result<Vec<Vec<f32>>>;
}

#[cfg(feature = "minilm")]
impl Teacher for super::minilm::MiniLm {
    fn model_name(&self) -> &str {
        "all-MiniLM-L6-v2"
    }

    fn feeding(&self) -> &str {
        "as [CLS] token [SEP]"
    }

    fn token_rows(&self, tokens: &[String]) -> Result<Vec<Vec<f32>>> {
        let id_of = |name: &str| {
            self.tokenizer()
                .token_to_id(name)
                .ok_or_else(|| Error::Embedder {
                    message: format!("the vocabulary has no {name}"),
                })
        };
        let (cls, sep) = (id_of("[CLS]")?, id_of("[SEP]")?);
        for (id, token) in tokens.iter().enumerate() {
            if self.tokenizer().token_to_id(token) != Some(id as u32) {
                return Err(Error::Embedder {
                    message: format!("token {id} ({token:?}) is not all-MiniLM-L6-v2's"),
                });
            }
        }
        let ids: Vec<u32> = (0..tokens.len() as u32).collect();
        let mut table = Vec::with_capacity(tokens.len());
        for group in ids.chunks(512) {
            let batch: Vec<Vec<u32>> = group.iter().map(|&t| vec![cls, t, sep]).collect();
            table.extend(self.pooled(&batch)?);
        }
        Ok(table)
    }
}

#[cfg(feature = "e5")]
impl Teacher for super::e5::E5 {
    fn model_name(&self) -> &str {
        "multilingual-e5-small"
    }

    fn feeding(&self) -> &str {
        "as the text `passage: token` (without ##)"
    }

    fn token_rows(&self, tokens: &[String]) -> Result<Vec<Vec<f32>>> {
        let texts: Vec<&str> = tokens
            .iter()
            .map(|t| t.strip_prefix("##").unwrap_or(t))
            .collect();
        let mut table = Vec::with_capacity(tokens.len());
        for group in texts.chunks(512) {
            table.extend(self.pooled_texts(group, super::e5::Form::Passage)?);
        }
        Ok(table)
    }
}

/// Settings of a distillation.
#[derive(Clone, Debug)]
pub struct DistillOptions {
    /// Output dimensions (principal components kept).
    pub dims: usize,
    /// SIF coefficient `a`.
    pub sif: f64,
    /// Leading principal components to drop ("all-but-the-top": they mostly encode frequency).
    pub skip: usize,
    /// Sentence pairs for calibrating the near-duplicate threshold.
    pub pairs: Vec<(String, String)>,
}

/// What a distillation produced.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DistillReport {
    /// The file's header.
    pub header: StaticHeader,
    /// The model file's bytes.
    #[serde(skip)]
    pub bytes: Vec<u8>,
    /// Share of the variance the kept components explain.
    pub explained_variance: f64,
    /// Pearson correlation of static and transformer cosines on the calibration pairs.
    pub pair_correlation: f64,
    /// Calibration pairs used.
    pub pairs: usize,
}

/// Builds the static model from a loaded transformer, over the WordPiece vocabulary of the
/// model compiled into lore.
pub fn distill(model: &dyn Teacher, options: &DistillOptions) -> Result<DistillReport> {
    let tokens: Vec<String> = StaticEmbedder::builtin()?
        .tokens()
        .map(str::to_string)
        .collect();
    let hidden = model.id().dims;
    if options.dims == 0 || options.dims + options.skip > hidden {
        return Err(Error::Invalid {
            what: "dimensions",
            value: options.dims.to_string(),
            reason: format!("expected 1 to {hidden}"),
        });
    }

    // 1. Every token alone through the transformer, mean-pooled.
    let table = model.token_rows(&tokens)?;

    // 2. PCA.
    let pca = principal_components(&table, options.dims, options.skip);

    // 3. Project, weight, done.
    let harmonic: f64 = (1..=tokens.len()).map(|r| 1.0 / r as f64).sum();
    let rows: Vec<Vec<f32>> = table
        .iter()
        .enumerate()
        .map(|(rank, row)| {
            let p = 1.0 / ((rank + 1) as f64 * harmonic);
            let weight = options.sif / (options.sif + p);
            pca.components
                .iter()
                .map(|c| {
                    let proj: f64 = c
                        .iter()
                        .zip(row.iter().zip(&pca.mean))
                        .map(|(w, (&x, m))| w * (x as f64 - m))
                        .sum();
                    (proj * weight) as f32
                })
                .collect()
        })
        .collect();

    let recipe = format!(
        "each token of the vocabulary {} through {}, mean-pooled; \
         PCA to {} dims after dropping the top {}; SIF weight a/(a+p), a={}, p = Zipf by \
         vocabulary rank; i8 rows with one f32 scale each",
        model.feeding(),
        model.model_name(),
        options.dims,
        options.skip,
        options.sif
    );
    let mut header = StaticHeader {
        model: format!("{}-static", model.model_name()),
        revision: String::new(),
        dims: options.dims,
        vocab: tokens.len(),
        near_duplicate: model.near_duplicate(),
        relevance_floor: model.relevance_floor(),
        recipe,
    };
    header.revision = content_hash(&StaticEmbedder::write_rows(&header, &tokens, &rows)?);
    let probe = StaticEmbedder::parse(std::borrow::Cow::Owned(StaticEmbedder::write(
        &header, &tokens, &rows,
    )?))?;

    // 4. Calibrate the thresholds against the teacher's.
    let correlation = calibrate(model, &probe, &options.pairs, &mut header)?;
    let bytes = StaticEmbedder::write(&header, &tokens, &rows)?;
    Ok(DistillReport {
        header,
        bytes,
        explained_variance: pca.explained,
        pair_correlation: correlation,
        pairs: options.pairs.len(),
    })
}

/// The principal components of a table's rows.
struct Pca {
    /// The rows' mean.
    mean: Vec<f64>,
    /// The kept components, largest variance first.
    components: Vec<Vec<f64>>,
    /// Share of the variance they explain.
    explained: f64,
}

/// The `dims` principal components of `table` after the `skip` largest.
fn principal_components(table: &[Vec<f32>], dims: usize, skip: usize) -> Pca {
    let hidden = table.first().map_or(0, Vec::len);
    let n = table.len() as f64;
    let mut mean = vec![0f64; hidden];
    for row in table {
        for (m, &x) in mean.iter_mut().zip(row) {
            *m += x as f64 / n;
        }
    }
    let mut cov = vec![0f64; hidden * hidden];
    let mut centred = vec![0f64; hidden];
    for row in table {
        for (c, (&x, m)) in centred.iter_mut().zip(row.iter().zip(&mean)) {
            *c = x as f64 - m;
        }
        for i in 0..hidden {
            let ci = centred[i];
            let line = &mut cov[i * hidden..(i + 1) * hidden];
            for (slot, &cj) in line[i..].iter_mut().zip(&centred[i..]) {
                *slot += ci * cj;
            }
        }
    }
    for i in 0..hidden {
        for j in 0..i {
            cov[i * hidden + j] = cov[j * hidden + i];
        }
    }
    let (values, vectors) = symmetric_eigen(&cov, hidden);
    let mut order: Vec<usize> = (0..hidden).collect();
    order.sort_by(|&a, &b| values[b].total_cmp(&values[a]));
    let total: f64 = values.iter().map(|v| v.max(0.0)).sum();
    let keep = &order[skip..skip + dims];
    let kept: f64 = keep.iter().map(|&i| values[i].max(0.0)).sum();
    Pca {
        mean,
        components: keep
            .iter()
            .map(|&k| (0..hidden).map(|r| vectors[r * hidden + k]).collect())
            .collect(),
        explained: if total > 0.0 { kept / total } else { 0.0 },
    }
}

/// Sets the header's near-duplicate threshold and relevance floor to the static cosines a
/// least-squares fit over `pairs` maps the teacher's own to: text against text for the one,
/// query against text for the other. Returns the correlation of the static and the teacher's
/// text-to-text cosines.
fn calibrate(
    model: &dyn Teacher,
    probe: &StaticEmbedder,
    pairs: &[(String, String)],
    header: &mut StaticHeader,
) -> Result<f64> {
    let (mut texts, mut queries, mut ys) = (Vec::new(), Vec::new(), Vec::new());
    for (a, b) in pairs {
        let full = model.embed(&[a.as_str(), b.as_str()])?;
        let query = model.embed_queries(&[a.as_str()])?;
        let fast = probe.embed(&[a.as_str(), b.as_str()])?;
        texts.push(dot(&full[0], &full[1]) as f64);
        queries.push(dot(&query[0], &full[1]) as f64);
        ys.push(dot(&fast[0], &fast[1]) as f64);
    }
    let (slope, intercept, correlation) = linear_fit(&texts, &ys);
    if pairs.len() >= 2 && slope.is_finite() {
        header.near_duplicate =
            ((slope * model.near_duplicate() as f64 + intercept) as f32).clamp(0.5, 0.99);
    }
    let (slope, intercept, _) = linear_fit(&queries, &ys);
    if pairs.len() >= 2 && slope.is_finite() {
        header.relevance_floor =
            ((slope * model.relevance_floor() as f64 + intercept) as f32).clamp(0.0, 0.9);
    }
    Ok(correlation)
}

/// Least squares `y ≈ slope·x + intercept`, and Pearson's r.
fn linear_fit(xs: &[f64], ys: &[f64]) -> (f64, f64, f64) {
    let n = xs.len() as f64;
    if n < 2.0 {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let mx = xs.iter().sum::<f64>() / n;
    let my = ys.iter().sum::<f64>() / n;
    let sxy: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    let syy: f64 = ys.iter().map(|y| (y - my).powi(2)).sum();
    let slope = sxy / sxx;
    (slope, my - slope * mx, sxy / (sxx * syy).sqrt())
}

/// Eigen-decomposition of a symmetric `n×n` matrix (cyclic Jacobi): eigenvalues, and
/// eigenvectors as the columns of a row-major matrix.
pub fn symmetric_eigen(matrix: &[f64], n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut a = matrix.to_vec();
    let mut v = vec![0f64; n * n];
    for i in 0..n {
        v[i * n + i] = 1.0;
    }
    for _sweep in 0..100 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i * n + j].powi(2))
            .sum();
        let diag: f64 = (0..n).map(|i| a[i * n + i].powi(2)).sum();
        if off <= 1e-22 * diag.max(1e-300) {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = a[p * n + q];
                if apq.abs() < 1e-300 {
                    continue;
                }
                let theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let akp = a[k * n + p];
                    let akq = a[k * n + q];
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for k in 0..n {
                    let apk = a[p * n + k];
                    let aqk = a[q * n + k];
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
                for k in 0..n {
                    let vkp = v[k * n + p];
                    let vkq = v[k * n + q];
                    v[k * n + p] = c * vkp - s * vkq;
                    v[k * n + q] = s * vkp + c * vkq;
                }
            }
        }
    }
    ((0..n).map(|i| a[i * n + i]).collect(), v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jacobi_finds_eigenpairs() {
        let m = [4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 1.0];
        let (values, vectors) = symmetric_eigen(&m, 3);
        for k in 0..3 {
            let col: Vec<f64> = (0..3).map(|r| vectors[r * 3 + k]).collect();
            for r in 0..3 {
                let mv: f64 = (0..3).map(|c| m[r * 3 + c] * col[c]).sum();
                assert!((mv - values[k] * col[r]).abs() < 1e-9);
            }
        }
    }
}
