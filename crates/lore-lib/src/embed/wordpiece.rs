//! BERT's uncased tokenizer (normalizer, pre-tokenizer, WordPiece), for the static embedder.
//!
//! It follows the `BertNormalizer` (clean text, pad CJK ideographs, lowercase, strip accents),
//! `BertPreTokenizer` (split on whitespace, every punctuation character is a word of its own)
//! and WordPiece (greedy longest match, `##` continuations, `[UNK]` for a word that cannot be
//! split or is longer than 100 characters) of all-MiniLM-L6-v2's `tokenizer.json`. The
//! `minilm` feature's tests check it against the reference `tokenizers` crate.

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// Words longer than this many characters become `[UNK]`.
const MAX_WORD_CHARS: usize = 100;

/// A string → id table built without per-entry allocations (for a model file that does not
/// carry its tables, and for the e5 tier's unigram pieces): open addressing over one text buffer.
pub(crate) struct PieceTable {
    text: String,
    /// (start, len, id) per slot; `len == u32::MAX` marks an empty slot.
    slots: Vec<(u32, u32, u32)>,
}

fn fnv(s: &str) -> u64 {
    crate::hash::fnv1a(s.as_bytes())
}

/// Slots of a table for `entries` pieces: a power of two at least twice the count.
fn slot_count(entries: usize) -> usize {
    (entries * 2).next_power_of_two().max(16)
}

impl PieceTable {
    pub(crate) fn new(entries: &[(&str, u32)]) -> PieceTable {
        PieceTable::with_slots(entries, slot_count(entries.len()))
    }

    /// A table of `size` slots (a power of two above the number of entries).
    fn with_slots(entries: &[(&str, u32)], size: usize) -> PieceTable {
        let mut table = PieceTable {
            text: String::with_capacity(entries.iter().map(|(t, _)| t.len()).sum()),
            slots: vec![(0, u32::MAX, 0); size],
        };
        for &(token, id) in entries {
            if table.get(token).is_some() {
                continue; // the first id of a duplicated token wins
            }
            let start = table.text.len() as u32;
            table.text.push_str(token);
            let mut at = fnv(token) as usize & (size - 1);
            while table.slots[at].1 != u32::MAX {
                at = (at + 1) & (size - 1);
            }
            table.slots[at] = (start, token.len() as u32, id);
        }
        table
    }

    pub(crate) fn get(&self, key: &str) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut at = fnv(key) as usize & mask;
        loop {
            let (start, len, id) = self.slots[at];
            if len == u32::MAX {
                return None;
            }
            if len as usize == key.len()
                && &self.text[start as usize..(start + len) as usize] == key
            {
                return Some(id);
            }
            at = (at + 1) & mask;
        }
    }

    /// The id in each slot (`u32::MAX`: empty), as a stored table keeps them.
    fn slot_ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots
            .iter()
            .map(|&(_, len, id)| if len == u32::MAX { u32::MAX } else { id })
    }
}

/// Bytes a stored table is read from: the compiled-in model, or a model file read at run time.
#[derive(Clone)]
pub enum ModelBytes {
    /// Compiled into the binary.
    Builtin(&'static [u8]),
    /// Read from a file.
    Loaded(std::sync::Arc<[u8]>),
}

impl std::ops::Deref for ModelBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            ModelBytes::Builtin(b) => b,
            ModelBytes::Loaded(b) => b,
        }
    }
}

/// The magic that opens a model file's stored piece tables.
const TABLES_MAGIC: &[u8; 8] = b"LOREWPT1";

/// The two piece tables as a model file stores them at its end, read in place (nothing is built
/// when a process starts): `LOREWPT1`; S `u32` ids of word-initial pieces and S `u32` ids of
/// continuation pieces (`u32::MAX`: an empty slot; FNV-1a of the piece, linear probing); per
/// token the `u32` offset of its bytes in the file (each preceded by its `u16` length, as the
/// vocabulary section stores it); the `u32` id of `[UNK]`; the `u32` slot count S.
struct StoredPieces {
    bytes: ModelBytes,
    initial_at: usize,
    continuation_at: usize,
    starts_at: usize,
    mask: usize,
    vocab: usize,
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

impl StoredPieces {
    /// The token with this id, `##` left on.
    fn token(&self, id: u32) -> Option<&[u8]> {
        if id as usize >= self.vocab {
            return None;
        }
        let start = u32_at(&self.bytes, self.starts_at + 4 * id as usize)? as usize;
        let len_at = start.checked_sub(2)?;
        let len = u16::from_le_bytes(self.bytes.get(len_at..start)?.try_into().ok()?) as usize;
        self.bytes.get(start..start + len)
    }

    fn get(&self, table_at: usize, continuation: bool, key: &str) -> Option<u32> {
        let mut at = fnv(key) as usize & self.mask;
        for _ in 0..=self.mask {
            let id = u32_at(&self.bytes, table_at + 4 * at)?;
            if id == u32::MAX {
                return None;
            }
            let token = self.token(id)?;
            let piece = if continuation {
                token.get(2..).unwrap_or_default()
            } else {
                token
            };
            if piece == key.as_bytes() {
                return Some(id);
            }
            at = (at + 1) & self.mask;
        }
        None
    }
}

/// Where a tokenizer looks its pieces up.
enum Pieces {
    /// Built from the vocabulary when the tokenizer was made.
    Built {
        initial: PieceTable,
        continuation: PieceTable,
    },
    /// Read in place from the model file.
    Stored(StoredPieces),
}

impl Pieces {
    fn initial(&self, key: &str) -> Option<u32> {
        match self {
            Pieces::Built { initial, .. } => initial.get(key),
            Pieces::Stored(s) => s.get(s.initial_at, false, key),
        }
    }

    fn continuation(&self, key: &str) -> Option<u32> {
        match self {
            Pieces::Built { continuation, .. } => continuation.get(key),
            Pieces::Stored(s) => s.get(s.continuation_at, true, key),
        }
    }
}

/// Pieces with their token ids.
type Entries<'a> = Vec<(&'a str, u32)>;

/// Splits a vocabulary in id order into word-initial and continuation pieces (without `##`),
/// and finds `[UNK]`.
fn split_vocabulary<'a>(
    tokens: impl IntoIterator<Item = &'a str>,
) -> (Entries<'a>, Entries<'a>, Option<u32>) {
    let mut initial = Vec::new();
    let mut continuation = Vec::new();
    let mut unknown = None;
    for (id, token) in tokens.into_iter().enumerate() {
        let id = id as u32;
        if token == "[UNK]" {
            unknown = Some(id);
        }
        match token.strip_prefix("##") {
            Some(rest) if !rest.is_empty() => continuation.push((rest, id)),
            _ => initial.push((token, id)),
        }
    }
    (initial, continuation, unknown)
}

/// The stored-tables section for a vocabulary whose token `i` has its bytes at `starts[i]` in
/// the model file (see `StoredPieces` for the layout).
pub fn stored_tables(tokens: &[&str], starts: &[u32]) -> Vec<u8> {
    let (initial, continuation, unknown) = split_vocabulary(tokens.iter().copied());
    let slots = slot_count(initial.len().max(continuation.len()));
    // Both tables get the same slot count, so one mask serves them.
    let build = |entries: &[(&str, u32)]| PieceTable::with_slots(entries, slots);
    let mut out = TABLES_MAGIC.to_vec();
    for table in [build(&initial), build(&continuation)] {
        for id in table.slot_ids() {
            out.extend_from_slice(&id.to_le_bytes());
        }
    }
    for start in starts {
        out.extend_from_slice(&start.to_le_bytes());
    }
    out.extend_from_slice(&unknown.unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(&(slots as u32).to_le_bytes());
    out
}

/// A WordPiece vocabulary.
pub struct WordPiece {
    pieces: Pieces,
    unknown: u32,
}

impl WordPiece {
    /// Builds the tokenizer from the vocabulary in id order (as in `vocab.txt`).
    pub fn new<'a>(tokens: impl IntoIterator<Item = &'a str>) -> Option<WordPiece> {
        let (initial, continuation, unknown) = split_vocabulary(tokens);
        Some(WordPiece {
            pieces: Pieces::Built {
                initial: PieceTable::new(&initial),
                continuation: PieceTable::new(&continuation),
            },
            unknown: unknown?,
        })
    }

    /// The tokenizer whose tables end a model file of `vocab` tokens (see [`stored_tables`]),
    /// with the offset where that section starts; `None` if the file does not end with one
    /// whose sizes add up.
    pub fn stored(bytes: ModelBytes, vocab: usize) -> Option<(WordPiece, usize)> {
        let end = bytes.len().checked_sub(8)?;
        let unknown = u32_at(&bytes, end)?;
        let slots = u32_at(&bytes, end + 4)? as usize;
        if !slots.is_power_of_two() || unknown as usize >= vocab {
            return None;
        }
        let starts_at = end.checked_sub(4 * vocab)?;
        let continuation_at = starts_at.checked_sub(4 * slots)?;
        let initial_at = continuation_at.checked_sub(4 * slots)?;
        let section_at = initial_at.checked_sub(TABLES_MAGIC.len())?;
        if bytes.get(section_at..initial_at)? != TABLES_MAGIC {
            return None;
        }
        let pieces = StoredPieces {
            bytes,
            initial_at,
            continuation_at,
            starts_at,
            mask: slots - 1,
            vocab,
        };
        Some((
            WordPiece {
                pieces: Pieces::Stored(pieces),
                unknown,
            },
            section_at,
        ))
    }

    /// The token ids of `text` (no `[CLS]`/`[SEP]`).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::with_capacity(text.len() / 4 + 1);
        self.encode_into(text, &mut ids);
        ids
    }

    /// Appends the token ids of `text` to `ids`.
    pub fn encode_into(&self, text: &str, ids: &mut Vec<u32>) {
        let mut word = String::with_capacity(32);
        let flush = |word: &mut String, ids: &mut Vec<u32>| {
            if !word.is_empty() {
                self.word_pieces(word, ids);
                word.clear();
            }
        };
        for c in text.chars() {
            if c.is_ascii() {
                match c {
                    'a'..='z' | '0'..='9' => word.push(c),
                    'A'..='Z' => word.push(c.to_ascii_lowercase()),
                    c if c.is_ascii_whitespace() => flush(&mut word, ids),
                    c if c.is_ascii_control() || c == '\0' => {}
                    c => {
                        // ASCII punctuation and symbols: a word of their own.
                        flush(&mut word, ids);
                        let mut buf = [0u8; 4];
                        self.word_pieces(c.encode_utf8(&mut buf), ids);
                    }
                }
                continue;
            }
            if c == '\u{fffd}' || (c.is_control() && !c.is_whitespace()) {
                continue;
            }
            if c.is_whitespace() {
                flush(&mut word, ids);
                continue;
            }
            if is_cjk(c) || is_punctuation(c) {
                flush(&mut word, ids);
                let mut piece = String::new();
                push_normalized(c, &mut piece);
                if !piece.is_empty() {
                    self.word_pieces(&piece, ids);
                }
                continue;
            }
            push_normalized(c, &mut word);
        }
        flush(&mut word, ids);
    }

    fn word_pieces(&self, word: &str, ids: &mut Vec<u32>) {
        if word.chars().count() > MAX_WORD_CHARS {
            ids.push(self.unknown);
            return;
        }
        let start_len = ids.len();
        let mut start = 0;
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while end > start {
                let piece = &word[start..end];
                let id = if start == 0 {
                    self.pieces.initial(piece)
                } else {
                    self.pieces.continuation(piece)
                };
                if let Some(id) = id {
                    found = Some(id);
                    break;
                }
                end = prev_boundary(word, end);
            }
            match found {
                Some(id) => {
                    ids.push(id);
                    start = end;
                }
                None => {
                    ids.truncate(start_len);
                    ids.push(self.unknown);
                    return;
                }
            }
        }
    }
}

fn prev_boundary(s: &str, mut i: usize) -> usize {
    i -= 1;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Lowercases and strips accents (NFD, then drops combining marks), as BERT's normalizer does.
fn push_normalized(c: char, out: &mut String) {
    for lower in c.to_lowercase() {
        for d in std::iter::once(lower).nfd() {
            if !is_combining_mark(d) {
                out.push(d);
            }
        }
    }
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

/// Non-ASCII punctuation (Unicode general category P*) in the blocks where it occurs.
fn is_punctuation(c: char) -> bool {
    matches!(c as u32,
        0xA1 | 0xA7 | 0xAB | 0xB6 | 0xB7 | 0xBB | 0xBF | 0x37E | 0x387
        | 0x55A..=0x55F | 0x589 | 0x58A | 0x5BE | 0x5C0 | 0x5C3 | 0x5C6 | 0x5F3 | 0x5F4
        | 0x609 | 0x60A | 0x60C | 0x60D | 0x61B | 0x61D..=0x61F | 0x66A..=0x66D | 0x6D4
        | 0x964 | 0x965 | 0x970 | 0xE4F | 0xE5A | 0xE5B
        | 0x2010..=0x2027 | 0x2030..=0x2043 | 0x2045..=0x2051 | 0x2053..=0x205E
        | 0x207D | 0x207E | 0x208D | 0x208E | 0x2308..=0x230B | 0x2329 | 0x232A
        | 0x2768..=0x2775 | 0x27C5 | 0x27C6 | 0x27E6..=0x27EF | 0x2983..=0x2998
        | 0x29D8..=0x29DB | 0x29FC | 0x29FD | 0x2CF9..=0x2CFC | 0x2CFE | 0x2CFF
        | 0x2E00..=0x2E2E | 0x2E30..=0x2E4F | 0x3001..=0x3003 | 0x3008..=0x3011
        | 0x3014..=0x301F | 0x3030 | 0x303D | 0x30A0 | 0x30FB
        | 0xFE10..=0xFE19 | 0xFE30..=0xFE52 | 0xFE54..=0xFE61 | 0xFE63 | 0xFE68 | 0xFE6A | 0xFE6B
        | 0xFF01..=0xFF03 | 0xFF05..=0xFF0A | 0xFF0C..=0xFF0F | 0xFF1A | 0xFF1B | 0xFF1F | 0xFF20
        | 0xFF3B..=0xFF3D | 0xFF3F | 0xFF5B | 0xFF5D | 0xFF5F..=0xFF65)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab() -> WordPiece {
        WordPiece::new([
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "port", "is", "80", "##80", "un", "##want",
            "##ed", ",", "runn", "##ing", ".", "cafe", "数",
        ])
        .unwrap()
    }

    #[test]
    fn splits_words_punctuation_and_continuations() {
        let wp = vocab();
        assert_eq!(wp.encode("The port is 8080."), vec![4, 5, 6, 7, 8, 15]);
        assert_eq!(wp.encode("unwanted, running"), vec![9, 10, 11, 12, 13, 14]);
    }

    #[test]
    fn unknown_words_become_one_unk() {
        let wp = vocab();
        assert_eq!(wp.encode("unxyz the"), vec![1, 4]);
        assert_eq!(wp.encode(&"a".repeat(150)), vec![1]);
    }

    #[test]
    fn lowercases_strips_accents_and_pads_cjk() {
        let wp = vocab();
        assert_eq!(wp.encode("CAFÉ"), vec![16]);
        assert_eq!(wp.encode("the数the"), vec![4, 17, 4]);
        assert_eq!(wp.encode("the\u{0}\u{fffd} port"), vec![4, 5]);
    }
}
