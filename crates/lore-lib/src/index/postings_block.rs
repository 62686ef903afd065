//! One block of a term's postings as stored: each entry's row-id offset (as the distance from
//! the entry before), its counts in summary, body and tags and its length, as LEB128 varints;
//! writing, reading (the usual one-byte case without a loop), and what a block that does not
//! decode is (damage, answered by a rebuild). See [`super::postings`] for what the blocks hold.

use crate::error::Result;

/// Row ids per block.
pub(super) const BLOCK_BITS: u32 = 10;
/// Bytes of one entry at most: five varints (two bytes for the distance, which is under 1,024,
/// three for each count, five for the length).
pub(super) const ENTRY_MAX: usize = 16;

/// One memory's counts of a term.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Entry {
    pub(super) offset: u16,
    pub(super) counts: [u16; 3],
    pub(super) length: u32,
}

/// Writes `list` (sorted by offset, offsets distinct) as a block's data: per entry, the
/// offset's distance from the previous entry's (from 0 for the first), then the three counts and
/// the length, each an unsigned LEB128 varint. A typical entry takes five bytes.
pub(super) fn encode_list(list: &[Entry], out: &mut Vec<u8>) {
    let mut previous = 0u16;
    for e in list {
        put_varint(out, u32::from(e.offset - previous));
        for c in e.counts {
            put_varint(out, u32::from(c));
        }
        put_varint(out, e.length);
        previous = e.offset;
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The varint at `*at`, moving past it; `None` when the data ends inside it or it overflows
/// a `u32` (a damaged block).
fn get_varint(data: &[u8], at: &mut usize) -> Option<u32> {
    let first = *data.get(*at)?;
    *at += 1;
    if first < 0x80 {
        return Some(u32::from(first));
    }
    let mut value = u64::from(first & 0x7f);
    let mut shift = 7;
    while shift < 35 {
        let byte = *data.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return u32::try_from(value).ok();
        }
        shift += 7;
    }
    None
}

/// The entries of a block's data as [`encode_list`] wrote them. Reading a common term's
/// postings decodes every entry, so the usual case (distance and counts under 128, one byte
/// each) is read without a loop. Iteration ends at the data's end or at the first entry that does
/// not decode or does not follow its predecessor; [`Entries::damaged`] tells which.
struct Entries<'a> {
    data: &'a [u8],
    at: usize,
    previous: Option<u16>,
}

impl<'a> Entries<'a> {
    fn new(data: &'a [u8]) -> Entries<'a> {
        Entries {
            data,
            at: 0,
            previous: None,
        }
    }

    /// Whether iteration stopped before the data's end (a damaged block: rebuild the index).
    fn damaged(&self) -> bool {
        self.at != self.data.len()
    }

    fn entry(&mut self) -> Option<Entry> {
        let (data, mut at) = (self.data, self.at);
        let (distance, counts) = match data.get(at..at + 4) {
            Some(&[d, s, b, t]) if (d | s | b | t) < 0x80 => {
                at += 4;
                (u16::from(d), [s, b, t].map(u16::from))
            }
            _ => {
                let mut next = || get_varint(data, &mut at).and_then(|v| u16::try_from(v).ok());
                (next()?, [next()?, next()?, next()?])
            }
        };
        let length = get_varint(data, &mut at)?;
        let offset = match self.previous {
            None => distance,
            Some(_) if distance == 0 => return None,
            Some(previous) => previous.checked_add(distance)?,
        };
        if offset >= 1 << BLOCK_BITS {
            return None;
        }
        self.previous = Some(offset);
        self.at = at;
        Some(Entry {
            offset,
            counts,
            length,
        })
    }
}

impl Iterator for Entries<'_> {
    type Item = Entry;

    fn next(&mut self) -> Option<Entry> {
        match self.at < self.data.len() {
            true => self.entry(),
            false => None,
        }
    }
}

/// Calls `f` with every entry of a block's data; an error (read as damage, so the index is
/// How many entries a block's data holds, counted without decoding: each entry is five
/// varints, and each varint ends in the one byte of it under 0x80.
pub(super) fn entries_in(data: &[u8]) -> usize {
    data.iter().filter(|&&b| b < 0x80).count() / 5
}

/// rebuilt) when the data does not decode whole.
pub(super) fn each_entry(data: &[u8], mut f: impl FnMut(Entry)) -> Result<()> {
    let mut entries = Entries::new(data);
    for e in entries.by_ref() {
        f(e);
    }
    match entries.damaged() {
        true => Err(damaged_block()),
        false => Ok(()),
    }
}

/// Every entry of a block's data; damage is an error (see [`each_entry`]).
pub(super) fn decode_block(data: &[u8]) -> Result<Vec<Entry>> {
    let mut list = Vec::new();
    each_entry(data, |e| list.push(e))?;
    Ok(list)
}

/// The error a postings block that does not decode gives: SQLite's "a value of the wrong form",
/// which the index reads as damage and answers with a rebuild.
pub(super) fn damaged_block() -> crate::error::Error {
    crate::error::Error::Index(rusqlite::Error::FromSqlConversionFailure(
        0,
        rusqlite::types::Type::Blob,
        "a BM25 postings block does not decode".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn entries() -> impl Strategy<Value = Vec<Entry>> {
        let entry = (any::<[u16; 3]>(), any::<u32>()).prop_map(|(counts, length)| Entry {
            offset: 0,
            counts,
            length,
        });
        proptest::collection::btree_map(0u16..1 << BLOCK_BITS, entry, 0..200).prop_map(|m| {
            m.into_iter()
                .map(|(offset, e)| Entry { offset, ..e })
                .collect()
        })
    }

    proptest! {
        #[test]
        fn a_block_reads_back_as_written(list in entries()) {
            let mut bytes = Vec::new();
            encode_list(&list, &mut bytes);
            prop_assert!(bytes.len() <= list.len() * ENTRY_MAX);
            prop_assert_eq!(decode_block(&bytes).unwrap(), list);
        }

        /// A block cut anywhere but between entries, or followed by bytes that are no entry,
        /// is damage (never a shorter list read as whole).
        #[test]
        fn a_cut_or_damaged_block_is_damage(list in entries(), cut in any::<usize>()) {
            let mut bytes = Vec::new();
            encode_list(&list, &mut bytes);
            let cut = if bytes.is_empty() { 0 } else { cut % bytes.len() };
            bytes.truncate(cut);
            if let Ok(read) = decode_block(&bytes) {
                prop_assert!(list.starts_with(&read));
                let mut again = Vec::new();
                encode_list(&read, &mut again);
                prop_assert_eq!(again.len(), cut);
            }
            bytes.extend([0xff; 6]);
            prop_assert!(decode_block(&bytes).is_err());
        }
    }

    #[test]
    fn offsets_that_do_not_increase_or_leave_the_block_are_damage() {
        // Two entries at the same offset (a second distance of 0).
        assert!(decode_block(&[3, 0, 1, 0, 9, 0, 0, 1, 0, 9]).is_err());
        // An offset of 1,024 or more.
        assert!(decode_block(&[0x80, 0x08, 0, 1, 0, 9]).is_err());
        assert_eq!(
            decode_block(&[0xff, 0x07, 0, 1, 0, 9]).unwrap()[0].offset,
            1023
        );
        assert!(super::super::open::is_corruption(&damaged_block()));
    }

    #[test]
    fn a_typical_entry_takes_five_bytes() {
        let list: Vec<Entry> = (0..100)
            .map(|i| Entry {
                offset: i * 10,
                counts: [0, 1, 0],
                length: 60,
            })
            .collect();
        let mut bytes = Vec::new();
        encode_list(&list, &mut bytes);
        assert_eq!(bytes.len(), 500);
    }
}
