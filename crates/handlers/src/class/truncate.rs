//! The `ResultTruncateHook` class (stub).

use serde_json::Value;

use super::{ClassError, ClassInstance};

/// The class name.
pub(super) const CLASS: &str = "ResultTruncateHook";

/// Builds the class from its params.
pub(super) fn instantiate(_params: &Value) -> Result<ClassInstance, ClassError> {
    Err(ClassError::bad_params(CLASS, "not implemented yet"))
}
