-- expect: ERROR sandbox
SET memory_limit = '64GB';
