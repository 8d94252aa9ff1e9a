-- expect: ERROR sandbox
SET threads = 64;
