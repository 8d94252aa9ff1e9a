-- expect: ERROR sandbox
ATTACH '/tmp/arrivalbench-hostile.db' AS x;
