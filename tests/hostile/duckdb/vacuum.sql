-- expect: ERROR read-target
VACUUM;
