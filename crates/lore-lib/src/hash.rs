//! FNV-1a, the one small non-cryptographic hash lore uses: content hashes, model revisions,
//! token tables and the test embedder's word directions.

const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0100_0000_01b3;

/// An FNV-1a hasher fed bytes or whole 64-bit words (one multiply per word: faster over large
/// inputs such as model files).
#[derive(Clone, Copy, Debug)]
pub struct Fnv1a(u64);

impl Fnv1a {
    /// A fresh hasher.
    pub const fn new() -> Fnv1a {
        Fnv1a(OFFSET)
    }

    /// Mixes in one word.
    pub fn write_u64(&mut self, word: u64) {
        self.0 = (self.0 ^ word).wrapping_mul(PRIME);
    }

    /// Mixes in bytes, one at a time.
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    /// The hash.
    pub fn finish(self) -> u64 {
        self.0
    }
}

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a::new()
    }
}

/// FNV-1a of some bytes.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h = Fnv1a::new();
    h.write(bytes);
    h.finish()
}
