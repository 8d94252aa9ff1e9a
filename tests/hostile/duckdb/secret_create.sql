-- expect: ERROR sandbox
CREATE SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b');
