-- expect: ERROR read-target
FORCE CHECKPOINT;
