-- expect: ERROR sandbox
COPY (SELECT 1) TO '/tmp/arrivalbench-hostile-out.csv';
