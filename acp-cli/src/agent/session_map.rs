//! Maps keyed by session id, hashed cheaply: every chunk of a turn looks its session up in a
//! few of them (the running turn, the history it is recorded in), and SipHash, std's default,
//! showed in profiles of a `/flood`. Its resistance to chosen keys buys nothing here: the keys
//! are session ids of the one client this agent serves, which owns the process anyway.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A map from session id to `V` with [`SessionHasher`].
pub(crate) type SessionMap<V> = HashMap<String, V, BuildHasherDefault<SessionHasher>>;

/// A multiply-rotate hash over eight bytes at a time (the FxHash scheme): a few cycles for a
/// session id, where SipHash takes a few dozen.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SessionHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl SessionHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for SessionHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut eight = [0; 8];
            eight.copy_from_slice(word);
            self.add(u64::from_le_bytes(eight));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut eight = [0; 8];
            eight[..rest.len()].copy_from_slice(rest);
            // The length keeps "a" and "a\0" apart.
            self.add(u64::from_le_bytes(eight) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    #[inline]
    fn write_usize(&mut self, value: usize) {
        self.add(value as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, BuildHasherDefault};

    fn hash(key: &str) -> u64 {
        BuildHasherDefault::<SessionHasher>::default().hash_one(key)
    }

    #[test]
    fn ids_that_differ_anywhere_hash_apart() {
        let ids = [
            "",
            "a",
            "a\0",
            "b",
            "sess_01",
            "sess_02",
            "sess_10",
            "sess_0123456789",
            "sess_0123456788",
            "sess_1123456789",
        ];
        for (i, a) in ids.iter().enumerate() {
            for b in &ids[i + 1..] {
                assert_ne!(hash(a), hash(b), "{a:?} and {b:?}");
            }
        }
    }

    #[test]
    fn a_session_map_finds_what_it_holds() {
        let mut map: SessionMap<u32> = SessionMap::default();
        for n in 0..1000 {
            map.insert(format!("sess_{n}"), n);
        }
        assert_eq!(map.len(), 1000);
        assert!((0..1000).all(|n| map.get(&format!("sess_{n}")) == Some(&n)));
        assert_eq!(map.get("sess_1000"), None);
    }
}
