-- expect: ERROR sandbox
EXPORT DATABASE '/tmp/arrivalbench-hostile-export';
