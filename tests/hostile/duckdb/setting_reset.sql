-- expect: ERROR sandbox
RESET enable_external_access;
