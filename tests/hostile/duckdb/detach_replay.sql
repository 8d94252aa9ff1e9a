-- expect: ERROR sandbox
DETACH replay;
