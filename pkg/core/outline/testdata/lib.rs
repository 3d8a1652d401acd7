//! A tiny cache.
use std::collections::HashMap;

/// Cache maps keys to values with a capacity.
pub struct Cache<'a> {
    map: HashMap<&'a str, String>,
    cap: usize,
}

pub const DEFAULT_CAP: usize = 128;

impl<'a> Cache<'a> {
    /// Creates an empty cache.
    pub fn new(cap: usize) -> Self {
        Cache { map: HashMap::new(), cap }
    }

    #[inline]
    pub fn get(&self, k: &str) -> Option<&String> {
        self.map.get(k)
    }
}

pub enum Mode { Fast, Safe }

fn helper(x: u32) -> u32 {
    let s = "{ not a brace";
    x.wrapping_mul(2)
}
