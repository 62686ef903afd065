//! Token estimation: how many model tokens a text costs, the one rule every budget uses (the
//! memory context and trajectory packing).

/// Estimated tokens of a text: characters / 4, rounded up.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_characters_make_a_token_rounded_up() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        // Characters, not bytes.
        assert_eq!(estimate_tokens("ééééé"), 2);
    }
}
