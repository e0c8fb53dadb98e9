-- hostile: the issue's overload of arr_apply over a domain
-- expect: refused: function arr_apply(t, t, t, t, t, t, text, text, t)
-- arr:projection x1
CREATE DOMAIN t AS text;
CREATE TABLE loot (v text);
-- arr-test: pwn
CREATE FUNCTION arr_apply(a t, b t, c t, d t, e t, f t, g text, h text, i t) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pwn('arr_apply over a domain');
  INSERT INTO loot SELECT count(*)::text FROM public.events;
  INSERT INTO loot SELECT key_hash FROM rm_identity.api_keys;
  COPY (SELECT 'id') TO PROGRAM 'id >> WITNESS';
END $$;
-- arr:on CompletionRecorded
INSERT INTO loot VALUES (:type);
