//! Class hooks built from the class table and run through the real dispatcher.

use std::sync::Arc;

use serde_json::{Value, json};
use tollgate_handlers::{ClassError, ClassInstance, ClassTable};

#[test]
fn unknown_class_is_an_error_naming_it_and_the_known_ones() {
    let err = ClassTable::builtin()
        .instantiate("ReadOnlyGaurd", &Value::Null)
        .unwrap_err();
    let ClassError::UnknownClass { name, known } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(name, "ReadOnlyGaurd");
    assert!(known.contains(&"ReadOnlyGuard".to_owned()), "{known:?}");
    assert!(err.to_string().contains("ReadOnlyGaurd"), "{err}");
}

#[test]
fn builtin_table_names_the_four_classes() {
    assert_eq!(
        ClassTable::builtin().names(),
        [
            "AuditLogHook",
            "ConnectorRateLimitHook",
            "ReadOnlyGuard",
            "ResultTruncateHook"
        ]
    );
}

#[test]
fn user_registered_class_is_instantiated_with_its_params() {
    let mut table = ClassTable::builtin();
    table.register(
        "Echo",
        Arc::new(|params: &Value| {
            Ok(ClassInstance {
                tools: Some(vec![params["glob"].as_str().unwrap_or("*").to_owned()]),
                ..ClassInstance::default()
            })
        }),
    );
    let instance = table
        .instantiate("Echo", &json!({"glob": "oa__*"}))
        .unwrap();
    assert_eq!(instance.tools, Some(vec!["oa__*".to_owned()]));
    assert!(table.names().contains(&"Echo"));
}
