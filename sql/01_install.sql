-- 01_install: what CREATE EXTENSION makes, and where.
-- (pg_regress created the extension already; start from scratch)
DROP EXTENSION gpudl;
CREATE EXTENSION gpudl;
-- user functions live in the extension's schema (public here)
SELECT p.proname, p.pronargs AS nargs, pg_get_function_result(p.oid) AS returns
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'gpudl'
WHERE p.pronamespace = 'public'::regnamespace
ORDER BY 1, 2;
-- the catalog lives in schema gpudl
SELECT c.relname, c.relkind FROM pg_class c
WHERE c.relnamespace = 'gpudl'::regnamespace AND c.relkind IN ('r', 'S')
ORDER BY 1;
-- settings
-- (the service's four start-time settings are postmaster settings when gpudl
-- is preloaded and sighup ones otherwise: test/t/18_no_preload.sh checks both)
SELECT name, boot_val AS default,
       CASE WHEN name IN ('gpudl.service', 'gpudl.service_backend', 'gpudl.service_buffer',
                          'gpudl.service_slots') AND context IN ('postmaster', 'sighup')
            THEN 'at start' ELSE context END AS context
FROM pg_settings WHERE name LIKE 'gpudl.%' ORDER BY name COLLATE "C";
-- the extension cannot be moved after creation
ALTER EXTENSION gpudl SET SCHEMA pg_catalog;
-- CREATE EXTENSION ... SCHEMA puts the functions elsewhere, the catalog stays in gpudl
DROP EXTENSION gpudl;
CREATE SCHEMA dl;
CREATE EXTENSION gpudl SCHEMA dl;
SELECT count(*) AS functions_in_dl FROM pg_proc WHERE pronamespace = 'dl'::regnamespace AND proname LIKE 'gpudl\_%';
SELECT dl.gpudl_create_program('moved', 'p(1).');
SELECT name, version FROM gpudl.programs;
DROP EXTENSION gpudl;
DROP SCHEMA dl;
-- leave the extension installed for the tests that follow
CREATE EXTENSION gpudl;
