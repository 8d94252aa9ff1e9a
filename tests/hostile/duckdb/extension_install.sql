-- expect: ERROR sandbox
INSTALL httpfs;
