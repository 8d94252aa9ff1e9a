-- expect: ERROR sandbox
LOAD httpfs;
