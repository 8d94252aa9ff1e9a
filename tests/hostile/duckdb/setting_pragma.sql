-- expect: ERROR sandbox
PRAGMA memory_limit = '64GB';
