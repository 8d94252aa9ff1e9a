-- expect: ERROR sandbox
USE system;
