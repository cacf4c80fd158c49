//! The YAML loader on arbitrary input: it returns documents or an error
//! (with a line), never panics, never runs away (budgets), and what it
//! loads converts to JSON and back.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(docs) = conformance::yaml::parse_text(text) {
        for doc in &docs {
            let json = doc.to_json();
            let back = conformance::yaml::Node::from_json(&json);
            assert_eq!(back.to_json(), json);
        }
    }
});
