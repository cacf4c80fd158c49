//! Property tests of the postBuild substitution parser: it never panics on
//! arbitrary input, and what it accepts evaluates without panicking.

use conformance::postbuild::envsubst::{Lookup, parse};
use proptest::prelude::*;

fn lookup(name: &str) -> Lookup {
    match name.len() % 3 {
        0 => Lookup::Value(format!("v-{name}/x.y")),
        1 => Lookup::Missing,
        _ => Lookup::Unknown,
    }
}

/// Inputs dense in the characters the grammar cares about.
fn template_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("${".to_string()),
            Just("$$".to_string()),
            Just("$".to_string()),
            Just("}".to_string()),
            Just("{".to_string()),
            Just(":-".to_string()),
            Just(":=".to_string()),
            Just(":+".to_string()),
            Just("#".to_string()),
            Just("%".to_string()),
            Just("/".to_string()),
            Just("\\".to_string()),
            Just("^".to_string()),
            Just(",".to_string()),
            Just(":".to_string()),
            Just("-3".to_string()),
            "[a-zA-Z_0-9é]{0,4}",
            any::<char>().prop_map(|c| c.to_string()),
        ],
        0..40,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

    #[test]
    fn parse_and_eval_never_panic(input in template_text(), strict in any::<bool>()) {
        if let Ok(template) = parse(&input) {
            let _ = template.eval(&input, &lookup, strict);
        }
    }

    #[test]
    fn arbitrary_strings_never_panic(input in any::<String>()) {
        if let Ok(template) = parse(&input) {
            let _ = template.eval(&input, &lookup, true);
        }
    }

    #[test]
    fn text_without_dollar_is_unchanged(input in "[^$]{0,200}") {
        let template = parse(&input).expect("no `$`, nothing to parse");
        prop_assert_eq!(template.eval(&input, &lookup, true).expect("no variables"), input);
    }
}
