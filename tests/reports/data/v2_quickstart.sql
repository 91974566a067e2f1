-- A report database written by rackchaos with schema version 2 (run 1: quickstart plan, seed 3; run 2:
-- one event of every shape the detail text distinguishes), as 'sqlite3 .dump' prints it, plus the two
-- header fields .dump leaves out. Host and wall times were replaced with fixed values. Used to check
-- that the version 3 migration (events stored once) loses nothing.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE schema_history(version INTEGER PRIMARY KEY, description TEXT NOT NULL);
INSERT INTO schema_history VALUES(1,'initial schema: runs, components, jobs, events, typed event tables, metrics, views');
INSERT INTO schema_history VALUES(2,'gates: expectation results per run');
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  plan_name TEXT NOT NULL, plan_path TEXT NOT NULL, plan_text TEXT NOT NULL, plan_hash TEXT NOT NULL,
  seed TEXT NOT NULL,  -- decimal uint64: it may not fit SQLite's signed integer
  version TEXT NOT NULL, host TEXT NOT NULL, backend TEXT NOT NULL, command_line TEXT NOT NULL,
  started_wall TEXT NOT NULL, ended_wall TEXT,
  status TEXT NOT NULL
    CHECK(status IN ('running', 'passed', 'failed', 'error', 'interrupted', 'aborted')),
  exit_code INTEGER, failed_reason TEXT NOT NULL DEFAULT '');
INSERT INTO runs VALUES(1,'quickstart','scenarios/quickstart.yaml',replace('# Quickstart: one GB200 NVL72 rack, one 64-GPU synchronous training job, one fault of each kind.\n#\n#   rackchaos run scenarios/quickstart.yaml            # summary on the terminal, report in rackchaos.db\n#   sqlite3 rackchaos.db ''select * from fault_summary''\n#\n# The rack''s last two compute trays are hot spares: the job runs on 16 trays (64 GPUs) and the healer\n# restarts it on a spare when it isolates a tray. Faults are spaced so each recovery can be read alone.\nname: quickstart\ndescription: one fault of each kind on a GB200 NVL72 rack running a 64-GPU training job\nseed: 42\nduration: 6h\n\ncluster:\n  model: gb200-nvl72\n  racks: 1\n  spare_trays: 2\n\nworkload:\n  jobs:\n    - name: pretrain-64\n      gpus: 64\n      parallelism: {tp: 4, pp: 4, dp: 4}\n      step_time: 6s\n      checkpoint: {interval: 30m, write_time: 40s}\n      restart_overhead: 5m\n      collective_timeout: 10m\n\nfaults:\n  # An NVLink port of one GPU goes down: Xid 145 in the kernel log, bandwidth 17/18 for that GPU.\n  - at: 20m\n    kind: link_down\n    target: r01.tray03.gpu2.nvlink5\n    for: 30m\n\n  # A GPU''s power is capped at half its TDP: it slows, and the synchronous job with it.\n  - at: 1h20m\n    kind: gpu_throttle\n    target: r01.tray05.gpu1\n    params: {power_cap: 600W}\n    for: 1h\n\n  # A tray''s coolant valve sticks at 15%: temperature climbs, the GPUs throttle at slowdown.\n  - at: 2h40m\n    kind: valve_fail\n    target: r01.tray08.valve\n    params: {opening: 15%}\n    for: 45m\n\n  # A compute tray is pulled; it is reinserted an hour later and boots.\n  - at: 4h\n    kind: tray_pull\n    target: r01.tray11\n    for: 1h\n\nhealer:\n  policy: default\n\nexpect:\n  - ttd.max < 10m\n  - ttr.max < 30m\n  - healer.precision == 1\n  - healer.recall == 1\n  - ettr.min >= 0.6\n','\n',char(10)),'f6ba8c6ee35bed51','3','0.1.0','fixture-host','sim','rackchaos run scenarios/quickstart.yaml --db /tmp/rcx/v2.db --seed 3','2025-01-01T00:00:00Z','2025-01-01T00:05:00Z','passed',0,'');
INSERT INTO runs VALUES(2,'p','p','x','af63f54c86021707','1','v','fixture-host','sim','c','2025-01-01T00:00:00Z','2025-01-01T00:05:00Z','passed',0,'');
CREATE TABLE components(
  run_id INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,
  parent_id INTEGER, serial TEXT NOT NULL, PRIMARY KEY(run_id, id));
INSERT INTO components VALUES(1,0,'r01','rack',NULL,'SIM-gb200-nvl72-r01');
INSERT INTO components VALUES(1,1,'r01.cdu','cdu',0,'SIM-gb200-nvl72-r01.cdu');
INSERT INTO components VALUES(1,2,'r01.shelf1','power_shelf',0,'SIM-gb200-nvl72-r01.shelf1');
INSERT INTO components VALUES(1,3,'r01.shelf1.psu1','psu',2,'SIM-gb200-nvl72-r01.shelf1.psu1');
INSERT INTO components VALUES(1,4,'r01.shelf1.psu2','psu',2,'SIM-gb200-nvl72-r01.shelf1.psu2');
INSERT INTO components VALUES(1,5,'r01.shelf1.psu3','psu',2,'SIM-gb200-nvl72-r01.shelf1.psu3');
INSERT INTO components VALUES(1,6,'r01.shelf1.psu4','psu',2,'SIM-gb200-nvl72-r01.shelf1.psu4');
INSERT INTO components VALUES(1,7,'r01.shelf1.psu5','psu',2,'SIM-gb200-nvl72-r01.shelf1.psu5');
INSERT INTO components VALUES(1,8,'r01.shelf1.psu6','psu',2,'SIM-gb200-nvl72-r01.shelf1.psu6');
INSERT INTO components VALUES(1,9,'r01.shelf2','power_shelf',0,'SIM-gb200-nvl72-r01.shelf2');
INSERT INTO components VALUES(1,10,'r01.shelf2.psu1','psu',9,'SIM-gb200-nvl72-r01.shelf2.psu1');
INSERT INTO components VALUES(1,11,'r01.shelf2.psu2','psu',9,'SIM-gb200-nvl72-r01.shelf2.psu2');
INSERT INTO components VALUES(1,12,'r01.shelf2.psu3','psu',9,'SIM-gb200-nvl72-r01.shelf2.psu3');
INSERT INTO components VALUES(1,13,'r01.shelf2.psu4','psu',9,'SIM-gb200-nvl72-r01.shelf2.psu4');
INSERT INTO components VALUES(1,14,'r01.shelf2.psu5','psu',9,'SIM-gb200-nvl72-r01.shelf2.psu5');
INSERT INTO components VALUES(1,15,'r01.shelf2.psu6','psu',9,'SIM-gb200-nvl72-r01.shelf2.psu6');
INSERT INTO components VALUES(1,16,'r01.shelf3','power_shelf',0,'SIM-gb200-nvl72-r01.shelf3');
INSERT INTO components VALUES(1,17,'r01.shelf3.psu1','psu',16,'SIM-gb200-nvl72-r01.shelf3.psu1');
INSERT INTO components VALUES(1,18,'r01.shelf3.psu2','psu',16,'SIM-gb200-nvl72-r01.shelf3.psu2');
INSERT INTO components VALUES(1,19,'r01.shelf3.psu3','psu',16,'SIM-gb200-nvl72-r01.shelf3.psu3');
INSERT INTO components VALUES(1,20,'r01.shelf3.psu4','psu',16,'SIM-gb200-nvl72-r01.shelf3.psu4');
INSERT INTO components VALUES(1,21,'r01.shelf3.psu5','psu',16,'SIM-gb200-nvl72-r01.shelf3.psu5');
INSERT INTO components VALUES(1,22,'r01.shelf3.psu6','psu',16,'SIM-gb200-nvl72-r01.shelf3.psu6');
INSERT INTO components VALUES(1,23,'r01.shelf4','power_shelf',0,'SIM-gb200-nvl72-r01.shelf4');
INSERT INTO components VALUES(1,24,'r01.shelf4.psu1','psu',23,'SIM-gb200-nvl72-r01.shelf4.psu1');
INSERT INTO components VALUES(1,25,'r01.shelf4.psu2','psu',23,'SIM-gb200-nvl72-r01.shelf4.psu2');
INSERT INTO components VALUES(1,26,'r01.shelf4.psu3','psu',23,'SIM-gb200-nvl72-r01.shelf4.psu3');
INSERT INTO components VALUES(1,27,'r01.shelf4.psu4','psu',23,'SIM-gb200-nvl72-r01.shelf4.psu4');
INSERT INTO components VALUES(1,28,'r01.shelf4.psu5','psu',23,'SIM-gb200-nvl72-r01.shelf4.psu5');
INSERT INTO components VALUES(1,29,'r01.shelf4.psu6','psu',23,'SIM-gb200-nvl72-r01.shelf4.psu6');
INSERT INTO components VALUES(1,30,'r01.shelf5','power_shelf',0,'SIM-gb200-nvl72-r01.shelf5');
INSERT INTO components VALUES(1,31,'r01.shelf5.psu1','psu',30,'SIM-gb200-nvl72-r01.shelf5.psu1');
INSERT INTO components VALUES(1,32,'r01.shelf5.psu2','psu',30,'SIM-gb200-nvl72-r01.shelf5.psu2');
INSERT INTO components VALUES(1,33,'r01.shelf5.psu3','psu',30,'SIM-gb200-nvl72-r01.shelf5.psu3');
INSERT INTO components VALUES(1,34,'r01.shelf5.psu4','psu',30,'SIM-gb200-nvl72-r01.shelf5.psu4');
INSERT INTO components VALUES(1,35,'r01.shelf5.psu5','psu',30,'SIM-gb200-nvl72-r01.shelf5.psu5');
INSERT INTO components VALUES(1,36,'r01.shelf5.psu6','psu',30,'SIM-gb200-nvl72-r01.shelf5.psu6');
INSERT INTO components VALUES(1,37,'r01.shelf6','power_shelf',0,'SIM-gb200-nvl72-r01.shelf6');
INSERT INTO components VALUES(1,38,'r01.shelf6.psu1','psu',37,'SIM-gb200-nvl72-r01.shelf6.psu1');
INSERT INTO components VALUES(1,39,'r01.shelf6.psu2','psu',37,'SIM-gb200-nvl72-r01.shelf6.psu2');
INSERT INTO components VALUES(1,40,'r01.shelf6.psu3','psu',37,'SIM-gb200-nvl72-r01.shelf6.psu3');
INSERT INTO components VALUES(1,41,'r01.shelf6.psu4','psu',37,'SIM-gb200-nvl72-r01.shelf6.psu4');
INSERT INTO components VALUES(1,42,'r01.shelf6.psu5','psu',37,'SIM-gb200-nvl72-r01.shelf6.psu5');
INSERT INTO components VALUES(1,43,'r01.shelf6.psu6','psu',37,'SIM-gb200-nvl72-r01.shelf6.psu6');
INSERT INTO components VALUES(1,44,'r01.shelf7','power_shelf',0,'SIM-gb200-nvl72-r01.shelf7');
INSERT INTO components VALUES(1,45,'r01.shelf7.psu1','psu',44,'SIM-gb200-nvl72-r01.shelf7.psu1');
INSERT INTO components VALUES(1,46,'r01.shelf7.psu2','psu',44,'SIM-gb200-nvl72-r01.shelf7.psu2');
INSERT INTO components VALUES(1,47,'r01.shelf7.psu3','psu',44,'SIM-gb200-nvl72-r01.shelf7.psu3');
INSERT INTO components VALUES(1,48,'r01.shelf7.psu4','psu',44,'SIM-gb200-nvl72-r01.shelf7.psu4');
INSERT INTO components VALUES(1,49,'r01.shelf7.psu5','psu',44,'SIM-gb200-nvl72-r01.shelf7.psu5');
INSERT INTO components VALUES(1,50,'r01.shelf7.psu6','psu',44,'SIM-gb200-nvl72-r01.shelf7.psu6');
INSERT INTO components VALUES(1,51,'r01.shelf8','power_shelf',0,'SIM-gb200-nvl72-r01.shelf8');
INSERT INTO components VALUES(1,52,'r01.shelf8.psu1','psu',51,'SIM-gb200-nvl72-r01.shelf8.psu1');
INSERT INTO components VALUES(1,53,'r01.shelf8.psu2','psu',51,'SIM-gb200-nvl72-r01.shelf8.psu2');
INSERT INTO components VALUES(1,54,'r01.shelf8.psu3','psu',51,'SIM-gb200-nvl72-r01.shelf8.psu3');
INSERT INTO components VALUES(1,55,'r01.shelf8.psu4','psu',51,'SIM-gb200-nvl72-r01.shelf8.psu4');
INSERT INTO components VALUES(1,56,'r01.shelf8.psu5','psu',51,'SIM-gb200-nvl72-r01.shelf8.psu5');
INSERT INTO components VALUES(1,57,'r01.shelf8.psu6','psu',51,'SIM-gb200-nvl72-r01.shelf8.psu6');
INSERT INTO components VALUES(1,58,'r01.switch1','switch_tray',0,'SIM-gb200-nvl72-r01.switch1');
INSERT INTO components VALUES(1,59,'r01.switch2','switch_tray',0,'SIM-gb200-nvl72-r01.switch2');
INSERT INTO components VALUES(1,60,'r01.switch3','switch_tray',0,'SIM-gb200-nvl72-r01.switch3');
INSERT INTO components VALUES(1,61,'r01.switch4','switch_tray',0,'SIM-gb200-nvl72-r01.switch4');
INSERT INTO components VALUES(1,62,'r01.switch5','switch_tray',0,'SIM-gb200-nvl72-r01.switch5');
INSERT INTO components VALUES(1,63,'r01.switch6','switch_tray',0,'SIM-gb200-nvl72-r01.switch6');
INSERT INTO components VALUES(1,64,'r01.switch7','switch_tray',0,'SIM-gb200-nvl72-r01.switch7');
INSERT INTO components VALUES(1,65,'r01.switch8','switch_tray',0,'SIM-gb200-nvl72-r01.switch8');
INSERT INTO components VALUES(1,66,'r01.switch9','switch_tray',0,'SIM-gb200-nvl72-r01.switch9');
INSERT INTO components VALUES(1,67,'r01.tray01','compute_tray',0,'SIM-gb200-nvl72-r01.tray01');
INSERT INTO components VALUES(1,68,'r01.tray01.valve','valve',67,'SIM-gb200-nvl72-r01.tray01.valve');
INSERT INTO components VALUES(1,69,'r01.tray01.cpu0','cpu',67,'SIM-gb200-nvl72-r01.tray01.cpu0');
INSERT INTO components VALUES(1,70,'r01.tray01.cpu1','cpu',67,'SIM-gb200-nvl72-r01.tray01.cpu1');
INSERT INTO components VALUES(1,71,'r01.tray01.gpu0','gpu',67,'SIM-gb200-nvl72-r01.tray01.gpu0');
INSERT INTO components VALUES(1,72,'r01.tray01.gpu1','gpu',67,'SIM-gb200-nvl72-r01.tray01.gpu1');
INSERT INTO components VALUES(1,73,'r01.tray01.gpu2','gpu',67,'SIM-gb200-nvl72-r01.tray01.gpu2');
INSERT INTO components VALUES(1,74,'r01.tray01.gpu3','gpu',67,'SIM-gb200-nvl72-r01.tray01.gpu3');
INSERT INTO components VALUES(1,75,'r01.tray01.nic0','nic',67,'SIM-gb200-nvl72-r01.tray01.nic0');
INSERT INTO components VALUES(1,76,'r01.tray01.nic1','nic',67,'SIM-gb200-nvl72-r01.tray01.nic1');
INSERT INTO components VALUES(1,77,'r01.tray01.nic2','nic',67,'SIM-gb200-nvl72-r01.tray01.nic2');
INSERT INTO components VALUES(1,78,'r01.tray01.nic3','nic',67,'SIM-gb200-nvl72-r01.tray01.nic3');
INSERT INTO components VALUES(1,79,'r01.tray02','compute_tray',0,'SIM-gb200-nvl72-r01.tray02');
INSERT INTO components VALUES(1,80,'r01.tray02.valve','valve',79,'SIM-gb200-nvl72-r01.tray02.valve');
INSERT INTO components VALUES(1,81,'r01.tray02.cpu0','cpu',79,'SIM-gb200-nvl72-r01.tray02.cpu0');
INSERT INTO components VALUES(1,82,'r01.tray02.cpu1','cpu',79,'SIM-gb200-nvl72-r01.tray02.cpu1');
INSERT INTO components VALUES(1,83,'r01.tray02.gpu0','gpu',79,'SIM-gb200-nvl72-r01.tray02.gpu0');
INSERT INTO components VALUES(1,84,'r01.tray02.gpu1','gpu',79,'SIM-gb200-nvl72-r01.tray02.gpu1');
INSERT INTO components VALUES(1,85,'r01.tray02.gpu2','gpu',79,'SIM-gb200-nvl72-r01.tray02.gpu2');
INSERT INTO components VALUES(1,86,'r01.tray02.gpu3','gpu',79,'SIM-gb200-nvl72-r01.tray02.gpu3');
INSERT INTO components VALUES(1,87,'r01.tray02.nic0','nic',79,'SIM-gb200-nvl72-r01.tray02.nic0');
INSERT INTO components VALUES(1,88,'r01.tray02.nic1','nic',79,'SIM-gb200-nvl72-r01.tray02.nic1');
INSERT INTO components VALUES(1,89,'r01.tray02.nic2','nic',79,'SIM-gb200-nvl72-r01.tray02.nic2');
INSERT INTO components VALUES(1,90,'r01.tray02.nic3','nic',79,'SIM-gb200-nvl72-r01.tray02.nic3');
INSERT INTO components VALUES(1,91,'r01.tray03','compute_tray',0,'SIM-gb200-nvl72-r01.tray03');
INSERT INTO components VALUES(1,92,'r01.tray03.valve','valve',91,'SIM-gb200-nvl72-r01.tray03.valve');
INSERT INTO components VALUES(1,93,'r01.tray03.cpu0','cpu',91,'SIM-gb200-nvl72-r01.tray03.cpu0');
INSERT INTO components VALUES(1,94,'r01.tray03.cpu1','cpu',91,'SIM-gb200-nvl72-r01.tray03.cpu1');
INSERT INTO components VALUES(1,95,'r01.tray03.gpu0','gpu',91,'SIM-gb200-nvl72-r01.tray03.gpu0');
INSERT INTO components VALUES(1,96,'r01.tray03.gpu1','gpu',91,'SIM-gb200-nvl72-r01.tray03.gpu1');
INSERT INTO components VALUES(1,97,'r01.tray03.gpu2','gpu',91,'SIM-gb200-nvl72-r01.tray03.gpu2');
INSERT INTO components VALUES(1,98,'r01.tray03.gpu3','gpu',91,'SIM-gb200-nvl72-r01.tray03.gpu3');
INSERT INTO components VALUES(1,99,'r01.tray03.nic0','nic',91,'SIM-gb200-nvl72-r01.tray03.nic0');
INSERT INTO components VALUES(1,100,'r01.tray03.nic1','nic',91,'SIM-gb200-nvl72-r01.tray03.nic1');
INSERT INTO components VALUES(1,101,'r01.tray03.nic2','nic',91,'SIM-gb200-nvl72-r01.tray03.nic2');
INSERT INTO components VALUES(1,102,'r01.tray03.nic3','nic',91,'SIM-gb200-nvl72-r01.tray03.nic3');
INSERT INTO components VALUES(1,103,'r01.tray04','compute_tray',0,'SIM-gb200-nvl72-r01.tray04');
INSERT INTO components VALUES(1,104,'r01.tray04.valve','valve',103,'SIM-gb200-nvl72-r01.tray04.valve');
INSERT INTO components VALUES(1,105,'r01.tray04.cpu0','cpu',103,'SIM-gb200-nvl72-r01.tray04.cpu0');
INSERT INTO components VALUES(1,106,'r01.tray04.cpu1','cpu',103,'SIM-gb200-nvl72-r01.tray04.cpu1');
INSERT INTO components VALUES(1,107,'r01.tray04.gpu0','gpu',103,'SIM-gb200-nvl72-r01.tray04.gpu0');
INSERT INTO components VALUES(1,108,'r01.tray04.gpu1','gpu',103,'SIM-gb200-nvl72-r01.tray04.gpu1');
INSERT INTO components VALUES(1,109,'r01.tray04.gpu2','gpu',103,'SIM-gb200-nvl72-r01.tray04.gpu2');
INSERT INTO components VALUES(1,110,'r01.tray04.gpu3','gpu',103,'SIM-gb200-nvl72-r01.tray04.gpu3');
INSERT INTO components VALUES(1,111,'r01.tray04.nic0','nic',103,'SIM-gb200-nvl72-r01.tray04.nic0');
INSERT INTO components VALUES(1,112,'r01.tray04.nic1','nic',103,'SIM-gb200-nvl72-r01.tray04.nic1');
INSERT INTO components VALUES(1,113,'r01.tray04.nic2','nic',103,'SIM-gb200-nvl72-r01.tray04.nic2');
INSERT INTO components VALUES(1,114,'r01.tray04.nic3','nic',103,'SIM-gb200-nvl72-r01.tray04.nic3');
INSERT INTO components VALUES(1,115,'r01.tray05','compute_tray',0,'SIM-gb200-nvl72-r01.tray05');
INSERT INTO components VALUES(1,116,'r01.tray05.valve','valve',115,'SIM-gb200-nvl72-r01.tray05.valve');
INSERT INTO components VALUES(1,117,'r01.tray05.cpu0','cpu',115,'SIM-gb200-nvl72-r01.tray05.cpu0');
INSERT INTO components VALUES(1,118,'r01.tray05.cpu1','cpu',115,'SIM-gb200-nvl72-r01.tray05.cpu1');
INSERT INTO components VALUES(1,119,'r01.tray05.gpu0','gpu',115,'SIM-gb200-nvl72-r01.tray05.gpu0');
INSERT INTO components VALUES(1,120,'r01.tray05.gpu1','gpu',115,'SIM-gb200-nvl72-r01.tray05.gpu1');
INSERT INTO components VALUES(1,121,'r01.tray05.gpu2','gpu',115,'SIM-gb200-nvl72-r01.tray05.gpu2');
INSERT INTO components VALUES(1,122,'r01.tray05.gpu3','gpu',115,'SIM-gb200-nvl72-r01.tray05.gpu3');
INSERT INTO components VALUES(1,123,'r01.tray05.nic0','nic',115,'SIM-gb200-nvl72-r01.tray05.nic0');
INSERT INTO components VALUES(1,124,'r01.tray05.nic1','nic',115,'SIM-gb200-nvl72-r01.tray05.nic1');
INSERT INTO components VALUES(1,125,'r01.tray05.nic2','nic',115,'SIM-gb200-nvl72-r01.tray05.nic2');
INSERT INTO components VALUES(1,126,'r01.tray05.nic3','nic',115,'SIM-gb200-nvl72-r01.tray05.nic3');
INSERT INTO components VALUES(1,127,'r01.tray06','compute_tray',0,'SIM-gb200-nvl72-r01.tray06');
INSERT INTO components VALUES(1,128,'r01.tray06.valve','valve',127,'SIM-gb200-nvl72-r01.tray06.valve');
INSERT INTO components VALUES(1,129,'r01.tray06.cpu0','cpu',127,'SIM-gb200-nvl72-r01.tray06.cpu0');
INSERT INTO components VALUES(1,130,'r01.tray06.cpu1','cpu',127,'SIM-gb200-nvl72-r01.tray06.cpu1');
INSERT INTO components VALUES(1,131,'r01.tray06.gpu0','gpu',127,'SIM-gb200-nvl72-r01.tray06.gpu0');
INSERT INTO components VALUES(1,132,'r01.tray06.gpu1','gpu',127,'SIM-gb200-nvl72-r01.tray06.gpu1');
INSERT INTO components VALUES(1,133,'r01.tray06.gpu2','gpu',127,'SIM-gb200-nvl72-r01.tray06.gpu2');
INSERT INTO components VALUES(1,134,'r01.tray06.gpu3','gpu',127,'SIM-gb200-nvl72-r01.tray06.gpu3');
INSERT INTO components VALUES(1,135,'r01.tray06.nic0','nic',127,'SIM-gb200-nvl72-r01.tray06.nic0');
INSERT INTO components VALUES(1,136,'r01.tray06.nic1','nic',127,'SIM-gb200-nvl72-r01.tray06.nic1');
INSERT INTO components VALUES(1,137,'r01.tray06.nic2','nic',127,'SIM-gb200-nvl72-r01.tray06.nic2');
INSERT INTO components VALUES(1,138,'r01.tray06.nic3','nic',127,'SIM-gb200-nvl72-r01.tray06.nic3');
INSERT INTO components VALUES(1,139,'r01.tray07','compute_tray',0,'SIM-gb200-nvl72-r01.tray07');
INSERT INTO components VALUES(1,140,'r01.tray07.valve','valve',139,'SIM-gb200-nvl72-r01.tray07.valve');
INSERT INTO components VALUES(1,141,'r01.tray07.cpu0','cpu',139,'SIM-gb200-nvl72-r01.tray07.cpu0');
INSERT INTO components VALUES(1,142,'r01.tray07.cpu1','cpu',139,'SIM-gb200-nvl72-r01.tray07.cpu1');
INSERT INTO components VALUES(1,143,'r01.tray07.gpu0','gpu',139,'SIM-gb200-nvl72-r01.tray07.gpu0');
INSERT INTO components VALUES(1,144,'r01.tray07.gpu1','gpu',139,'SIM-gb200-nvl72-r01.tray07.gpu1');
INSERT INTO components VALUES(1,145,'r01.tray07.gpu2','gpu',139,'SIM-gb200-nvl72-r01.tray07.gpu2');
INSERT INTO components VALUES(1,146,'r01.tray07.gpu3','gpu',139,'SIM-gb200-nvl72-r01.tray07.gpu3');
INSERT INTO components VALUES(1,147,'r01.tray07.nic0','nic',139,'SIM-gb200-nvl72-r01.tray07.nic0');
INSERT INTO components VALUES(1,148,'r01.tray07.nic1','nic',139,'SIM-gb200-nvl72-r01.tray07.nic1');
INSERT INTO components VALUES(1,149,'r01.tray07.nic2','nic',139,'SIM-gb200-nvl72-r01.tray07.nic2');
INSERT INTO components VALUES(1,150,'r01.tray07.nic3','nic',139,'SIM-gb200-nvl72-r01.tray07.nic3');
INSERT INTO components VALUES(1,151,'r01.tray08','compute_tray',0,'SIM-gb200-nvl72-r01.tray08');
INSERT INTO components VALUES(1,152,'r01.tray08.valve','valve',151,'SIM-gb200-nvl72-r01.tray08.valve');
INSERT INTO components VALUES(1,153,'r01.tray08.cpu0','cpu',151,'SIM-gb200-nvl72-r01.tray08.cpu0');
INSERT INTO components VALUES(1,154,'r01.tray08.cpu1','cpu',151,'SIM-gb200-nvl72-r01.tray08.cpu1');
INSERT INTO components VALUES(1,155,'r01.tray08.gpu0','gpu',151,'SIM-gb200-nvl72-r01.tray08.gpu0');
INSERT INTO components VALUES(1,156,'r01.tray08.gpu1','gpu',151,'SIM-gb200-nvl72-r01.tray08.gpu1');
INSERT INTO components VALUES(1,157,'r01.tray08.gpu2','gpu',151,'SIM-gb200-nvl72-r01.tray08.gpu2');
INSERT INTO components VALUES(1,158,'r01.tray08.gpu3','gpu',151,'SIM-gb200-nvl72-r01.tray08.gpu3');
INSERT INTO components VALUES(1,159,'r01.tray08.nic0','nic',151,'SIM-gb200-nvl72-r01.tray08.nic0');
INSERT INTO components VALUES(1,160,'r01.tray08.nic1','nic',151,'SIM-gb200-nvl72-r01.tray08.nic1');
INSERT INTO components VALUES(1,161,'r01.tray08.nic2','nic',151,'SIM-gb200-nvl72-r01.tray08.nic2');
INSERT INTO components VALUES(1,162,'r01.tray08.nic3','nic',151,'SIM-gb200-nvl72-r01.tray08.nic3');
INSERT INTO components VALUES(1,163,'r01.tray09','compute_tray',0,'SIM-gb200-nvl72-r01.tray09');
INSERT INTO components VALUES(1,164,'r01.tray09.valve','valve',163,'SIM-gb200-nvl72-r01.tray09.valve');
INSERT INTO components VALUES(1,165,'r01.tray09.cpu0','cpu',163,'SIM-gb200-nvl72-r01.tray09.cpu0');
INSERT INTO components VALUES(1,166,'r01.tray09.cpu1','cpu',163,'SIM-gb200-nvl72-r01.tray09.cpu1');
INSERT INTO components VALUES(1,167,'r01.tray09.gpu0','gpu',163,'SIM-gb200-nvl72-r01.tray09.gpu0');
INSERT INTO components VALUES(1,168,'r01.tray09.gpu1','gpu',163,'SIM-gb200-nvl72-r01.tray09.gpu1');
INSERT INTO components VALUES(1,169,'r01.tray09.gpu2','gpu',163,'SIM-gb200-nvl72-r01.tray09.gpu2');
INSERT INTO components VALUES(1,170,'r01.tray09.gpu3','gpu',163,'SIM-gb200-nvl72-r01.tray09.gpu3');
INSERT INTO components VALUES(1,171,'r01.tray09.nic0','nic',163,'SIM-gb200-nvl72-r01.tray09.nic0');
INSERT INTO components VALUES(1,172,'r01.tray09.nic1','nic',163,'SIM-gb200-nvl72-r01.tray09.nic1');
INSERT INTO components VALUES(1,173,'r01.tray09.nic2','nic',163,'SIM-gb200-nvl72-r01.tray09.nic2');
INSERT INTO components VALUES(1,174,'r01.tray09.nic3','nic',163,'SIM-gb200-nvl72-r01.tray09.nic3');
INSERT INTO components VALUES(1,175,'r01.tray10','compute_tray',0,'SIM-gb200-nvl72-r01.tray10');
INSERT INTO components VALUES(1,176,'r01.tray10.valve','valve',175,'SIM-gb200-nvl72-r01.tray10.valve');
INSERT INTO components VALUES(1,177,'r01.tray10.cpu0','cpu',175,'SIM-gb200-nvl72-r01.tray10.cpu0');
INSERT INTO components VALUES(1,178,'r01.tray10.cpu1','cpu',175,'SIM-gb200-nvl72-r01.tray10.cpu1');
INSERT INTO components VALUES(1,179,'r01.tray10.gpu0','gpu',175,'SIM-gb200-nvl72-r01.tray10.gpu0');
INSERT INTO components VALUES(1,180,'r01.tray10.gpu1','gpu',175,'SIM-gb200-nvl72-r01.tray10.gpu1');
INSERT INTO components VALUES(1,181,'r01.tray10.gpu2','gpu',175,'SIM-gb200-nvl72-r01.tray10.gpu2');
INSERT INTO components VALUES(1,182,'r01.tray10.gpu3','gpu',175,'SIM-gb200-nvl72-r01.tray10.gpu3');
INSERT INTO components VALUES(1,183,'r01.tray10.nic0','nic',175,'SIM-gb200-nvl72-r01.tray10.nic0');
INSERT INTO components VALUES(1,184,'r01.tray10.nic1','nic',175,'SIM-gb200-nvl72-r01.tray10.nic1');
INSERT INTO components VALUES(1,185,'r01.tray10.nic2','nic',175,'SIM-gb200-nvl72-r01.tray10.nic2');
INSERT INTO components VALUES(1,186,'r01.tray10.nic3','nic',175,'SIM-gb200-nvl72-r01.tray10.nic3');
INSERT INTO components VALUES(1,187,'r01.tray11','compute_tray',0,'SIM-gb200-nvl72-r01.tray11');
INSERT INTO components VALUES(1,188,'r01.tray11.valve','valve',187,'SIM-gb200-nvl72-r01.tray11.valve');
INSERT INTO components VALUES(1,189,'r01.tray11.cpu0','cpu',187,'SIM-gb200-nvl72-r01.tray11.cpu0');
INSERT INTO components VALUES(1,190,'r01.tray11.cpu1','cpu',187,'SIM-gb200-nvl72-r01.tray11.cpu1');
INSERT INTO components VALUES(1,191,'r01.tray11.gpu0','gpu',187,'SIM-gb200-nvl72-r01.tray11.gpu0');
INSERT INTO components VALUES(1,192,'r01.tray11.gpu1','gpu',187,'SIM-gb200-nvl72-r01.tray11.gpu1');
INSERT INTO components VALUES(1,193,'r01.tray11.gpu2','gpu',187,'SIM-gb200-nvl72-r01.tray11.gpu2');
INSERT INTO components VALUES(1,194,'r01.tray11.gpu3','gpu',187,'SIM-gb200-nvl72-r01.tray11.gpu3');
INSERT INTO components VALUES(1,195,'r01.tray11.nic0','nic',187,'SIM-gb200-nvl72-r01.tray11.nic0');
INSERT INTO components VALUES(1,196,'r01.tray11.nic1','nic',187,'SIM-gb200-nvl72-r01.tray11.nic1');
INSERT INTO components VALUES(1,197,'r01.tray11.nic2','nic',187,'SIM-gb200-nvl72-r01.tray11.nic2');
INSERT INTO components VALUES(1,198,'r01.tray11.nic3','nic',187,'SIM-gb200-nvl72-r01.tray11.nic3');
INSERT INTO components VALUES(1,199,'r01.tray12','compute_tray',0,'SIM-gb200-nvl72-r01.tray12');
INSERT INTO components VALUES(1,200,'r01.tray12.valve','valve',199,'SIM-gb200-nvl72-r01.tray12.valve');
INSERT INTO components VALUES(1,201,'r01.tray12.cpu0','cpu',199,'SIM-gb200-nvl72-r01.tray12.cpu0');
INSERT INTO components VALUES(1,202,'r01.tray12.cpu1','cpu',199,'SIM-gb200-nvl72-r01.tray12.cpu1');
INSERT INTO components VALUES(1,203,'r01.tray12.gpu0','gpu',199,'SIM-gb200-nvl72-r01.tray12.gpu0');
INSERT INTO components VALUES(1,204,'r01.tray12.gpu1','gpu',199,'SIM-gb200-nvl72-r01.tray12.gpu1');
INSERT INTO components VALUES(1,205,'r01.tray12.gpu2','gpu',199,'SIM-gb200-nvl72-r01.tray12.gpu2');
INSERT INTO components VALUES(1,206,'r01.tray12.gpu3','gpu',199,'SIM-gb200-nvl72-r01.tray12.gpu3');
INSERT INTO components VALUES(1,207,'r01.tray12.nic0','nic',199,'SIM-gb200-nvl72-r01.tray12.nic0');
INSERT INTO components VALUES(1,208,'r01.tray12.nic1','nic',199,'SIM-gb200-nvl72-r01.tray12.nic1');
INSERT INTO components VALUES(1,209,'r01.tray12.nic2','nic',199,'SIM-gb200-nvl72-r01.tray12.nic2');
INSERT INTO components VALUES(1,210,'r01.tray12.nic3','nic',199,'SIM-gb200-nvl72-r01.tray12.nic3');
INSERT INTO components VALUES(1,211,'r01.tray13','compute_tray',0,'SIM-gb200-nvl72-r01.tray13');
INSERT INTO components VALUES(1,212,'r01.tray13.valve','valve',211,'SIM-gb200-nvl72-r01.tray13.valve');
INSERT INTO components VALUES(1,213,'r01.tray13.cpu0','cpu',211,'SIM-gb200-nvl72-r01.tray13.cpu0');
INSERT INTO components VALUES(1,214,'r01.tray13.cpu1','cpu',211,'SIM-gb200-nvl72-r01.tray13.cpu1');
INSERT INTO components VALUES(1,215,'r01.tray13.gpu0','gpu',211,'SIM-gb200-nvl72-r01.tray13.gpu0');
INSERT INTO components VALUES(1,216,'r01.tray13.gpu1','gpu',211,'SIM-gb200-nvl72-r01.tray13.gpu1');
INSERT INTO components VALUES(1,217,'r01.tray13.gpu2','gpu',211,'SIM-gb200-nvl72-r01.tray13.gpu2');
INSERT INTO components VALUES(1,218,'r01.tray13.gpu3','gpu',211,'SIM-gb200-nvl72-r01.tray13.gpu3');
INSERT INTO components VALUES(1,219,'r01.tray13.nic0','nic',211,'SIM-gb200-nvl72-r01.tray13.nic0');
INSERT INTO components VALUES(1,220,'r01.tray13.nic1','nic',211,'SIM-gb200-nvl72-r01.tray13.nic1');
INSERT INTO components VALUES(1,221,'r01.tray13.nic2','nic',211,'SIM-gb200-nvl72-r01.tray13.nic2');
INSERT INTO components VALUES(1,222,'r01.tray13.nic3','nic',211,'SIM-gb200-nvl72-r01.tray13.nic3');
INSERT INTO components VALUES(1,223,'r01.tray14','compute_tray',0,'SIM-gb200-nvl72-r01.tray14');
INSERT INTO components VALUES(1,224,'r01.tray14.valve','valve',223,'SIM-gb200-nvl72-r01.tray14.valve');
INSERT INTO components VALUES(1,225,'r01.tray14.cpu0','cpu',223,'SIM-gb200-nvl72-r01.tray14.cpu0');
INSERT INTO components VALUES(1,226,'r01.tray14.cpu1','cpu',223,'SIM-gb200-nvl72-r01.tray14.cpu1');
INSERT INTO components VALUES(1,227,'r01.tray14.gpu0','gpu',223,'SIM-gb200-nvl72-r01.tray14.gpu0');
INSERT INTO components VALUES(1,228,'r01.tray14.gpu1','gpu',223,'SIM-gb200-nvl72-r01.tray14.gpu1');
INSERT INTO components VALUES(1,229,'r01.tray14.gpu2','gpu',223,'SIM-gb200-nvl72-r01.tray14.gpu2');
INSERT INTO components VALUES(1,230,'r01.tray14.gpu3','gpu',223,'SIM-gb200-nvl72-r01.tray14.gpu3');
INSERT INTO components VALUES(1,231,'r01.tray14.nic0','nic',223,'SIM-gb200-nvl72-r01.tray14.nic0');
INSERT INTO components VALUES(1,232,'r01.tray14.nic1','nic',223,'SIM-gb200-nvl72-r01.tray14.nic1');
INSERT INTO components VALUES(1,233,'r01.tray14.nic2','nic',223,'SIM-gb200-nvl72-r01.tray14.nic2');
INSERT INTO components VALUES(1,234,'r01.tray14.nic3','nic',223,'SIM-gb200-nvl72-r01.tray14.nic3');
INSERT INTO components VALUES(1,235,'r01.tray15','compute_tray',0,'SIM-gb200-nvl72-r01.tray15');
INSERT INTO components VALUES(1,236,'r01.tray15.valve','valve',235,'SIM-gb200-nvl72-r01.tray15.valve');
INSERT INTO components VALUES(1,237,'r01.tray15.cpu0','cpu',235,'SIM-gb200-nvl72-r01.tray15.cpu0');
INSERT INTO components VALUES(1,238,'r01.tray15.cpu1','cpu',235,'SIM-gb200-nvl72-r01.tray15.cpu1');
INSERT INTO components VALUES(1,239,'r01.tray15.gpu0','gpu',235,'SIM-gb200-nvl72-r01.tray15.gpu0');
INSERT INTO components VALUES(1,240,'r01.tray15.gpu1','gpu',235,'SIM-gb200-nvl72-r01.tray15.gpu1');
INSERT INTO components VALUES(1,241,'r01.tray15.gpu2','gpu',235,'SIM-gb200-nvl72-r01.tray15.gpu2');
INSERT INTO components VALUES(1,242,'r01.tray15.gpu3','gpu',235,'SIM-gb200-nvl72-r01.tray15.gpu3');
INSERT INTO components VALUES(1,243,'r01.tray15.nic0','nic',235,'SIM-gb200-nvl72-r01.tray15.nic0');
INSERT INTO components VALUES(1,244,'r01.tray15.nic1','nic',235,'SIM-gb200-nvl72-r01.tray15.nic1');
INSERT INTO components VALUES(1,245,'r01.tray15.nic2','nic',235,'SIM-gb200-nvl72-r01.tray15.nic2');
INSERT INTO components VALUES(1,246,'r01.tray15.nic3','nic',235,'SIM-gb200-nvl72-r01.tray15.nic3');
INSERT INTO components VALUES(1,247,'r01.tray16','compute_tray',0,'SIM-gb200-nvl72-r01.tray16');
INSERT INTO components VALUES(1,248,'r01.tray16.valve','valve',247,'SIM-gb200-nvl72-r01.tray16.valve');
INSERT INTO components VALUES(1,249,'r01.tray16.cpu0','cpu',247,'SIM-gb200-nvl72-r01.tray16.cpu0');
INSERT INTO components VALUES(1,250,'r01.tray16.cpu1','cpu',247,'SIM-gb200-nvl72-r01.tray16.cpu1');
INSERT INTO components VALUES(1,251,'r01.tray16.gpu0','gpu',247,'SIM-gb200-nvl72-r01.tray16.gpu0');
INSERT INTO components VALUES(1,252,'r01.tray16.gpu1','gpu',247,'SIM-gb200-nvl72-r01.tray16.gpu1');
INSERT INTO components VALUES(1,253,'r01.tray16.gpu2','gpu',247,'SIM-gb200-nvl72-r01.tray16.gpu2');
INSERT INTO components VALUES(1,254,'r01.tray16.gpu3','gpu',247,'SIM-gb200-nvl72-r01.tray16.gpu3');
INSERT INTO components VALUES(1,255,'r01.tray16.nic0','nic',247,'SIM-gb200-nvl72-r01.tray16.nic0');
INSERT INTO components VALUES(1,256,'r01.tray16.nic1','nic',247,'SIM-gb200-nvl72-r01.tray16.nic1');
INSERT INTO components VALUES(1,257,'r01.tray16.nic2','nic',247,'SIM-gb200-nvl72-r01.tray16.nic2');
INSERT INTO components VALUES(1,258,'r01.tray16.nic3','nic',247,'SIM-gb200-nvl72-r01.tray16.nic3');
INSERT INTO components VALUES(1,259,'r01.tray17','compute_tray',0,'SIM-gb200-nvl72-r01.tray17');
INSERT INTO components VALUES(1,260,'r01.tray17.valve','valve',259,'SIM-gb200-nvl72-r01.tray17.valve');
INSERT INTO components VALUES(1,261,'r01.tray17.cpu0','cpu',259,'SIM-gb200-nvl72-r01.tray17.cpu0');
INSERT INTO components VALUES(1,262,'r01.tray17.cpu1','cpu',259,'SIM-gb200-nvl72-r01.tray17.cpu1');
INSERT INTO components VALUES(1,263,'r01.tray17.gpu0','gpu',259,'SIM-gb200-nvl72-r01.tray17.gpu0');
INSERT INTO components VALUES(1,264,'r01.tray17.gpu1','gpu',259,'SIM-gb200-nvl72-r01.tray17.gpu1');
INSERT INTO components VALUES(1,265,'r01.tray17.gpu2','gpu',259,'SIM-gb200-nvl72-r01.tray17.gpu2');
INSERT INTO components VALUES(1,266,'r01.tray17.gpu3','gpu',259,'SIM-gb200-nvl72-r01.tray17.gpu3');
INSERT INTO components VALUES(1,267,'r01.tray17.nic0','nic',259,'SIM-gb200-nvl72-r01.tray17.nic0');
INSERT INTO components VALUES(1,268,'r01.tray17.nic1','nic',259,'SIM-gb200-nvl72-r01.tray17.nic1');
INSERT INTO components VALUES(1,269,'r01.tray17.nic2','nic',259,'SIM-gb200-nvl72-r01.tray17.nic2');
INSERT INTO components VALUES(1,270,'r01.tray17.nic3','nic',259,'SIM-gb200-nvl72-r01.tray17.nic3');
INSERT INTO components VALUES(1,271,'r01.tray18','compute_tray',0,'SIM-gb200-nvl72-r01.tray18');
INSERT INTO components VALUES(1,272,'r01.tray18.valve','valve',271,'SIM-gb200-nvl72-r01.tray18.valve');
INSERT INTO components VALUES(1,273,'r01.tray18.cpu0','cpu',271,'SIM-gb200-nvl72-r01.tray18.cpu0');
INSERT INTO components VALUES(1,274,'r01.tray18.cpu1','cpu',271,'SIM-gb200-nvl72-r01.tray18.cpu1');
INSERT INTO components VALUES(1,275,'r01.tray18.gpu0','gpu',271,'SIM-gb200-nvl72-r01.tray18.gpu0');
INSERT INTO components VALUES(1,276,'r01.tray18.gpu1','gpu',271,'SIM-gb200-nvl72-r01.tray18.gpu1');
INSERT INTO components VALUES(1,277,'r01.tray18.gpu2','gpu',271,'SIM-gb200-nvl72-r01.tray18.gpu2');
INSERT INTO components VALUES(1,278,'r01.tray18.gpu3','gpu',271,'SIM-gb200-nvl72-r01.tray18.gpu3');
INSERT INTO components VALUES(1,279,'r01.tray18.nic0','nic',271,'SIM-gb200-nvl72-r01.tray18.nic0');
INSERT INTO components VALUES(1,280,'r01.tray18.nic1','nic',271,'SIM-gb200-nvl72-r01.tray18.nic1');
INSERT INTO components VALUES(1,281,'r01.tray18.nic2','nic',271,'SIM-gb200-nvl72-r01.tray18.nic2');
INSERT INTO components VALUES(1,282,'r01.tray18.nic3','nic',271,'SIM-gb200-nvl72-r01.tray18.nic3');
CREATE TABLE jobs(
  run_id INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT NOT NULL, gpus INTEGER NOT NULL,
  nominal_step_s REAL NOT NULL, PRIMARY KEY(run_id, id));
INSERT INTO jobs VALUES(1,0,'pretrain-64',64,6.0);
CREATE TABLE events(
  run_id INTEGER NOT NULL, seq INTEGER NOT NULL, t_us INTEGER NOT NULL, type TEXT NOT NULL,
  component_id INTEGER, job_id INTEGER, fault_id INTEGER, detail TEXT NOT NULL,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
INSERT INTO events VALUES(1,1,0,'job',NULL,0,NULL,'running steps=0 speed=1 gpus=64: running');
INSERT INTO events VALUES(1,2,1200000000,'physics',97,NULL,1,'nvlink_down value=5');
INSERT INTO events VALUES(1,3,1200000000,'job',NULL,0,1,'running steps=200 speed=0.994152 gpus=64: speed changed');
INSERT INTO events VALUES(1,4,1200000000,'fault_injected',97,NULL,1,'link_down on ''r01.tray03.gpu2.nvlink5'' port 5: state=down baseline=up');
INSERT INTO events VALUES(1,5,1200332938,'detected',97,NULL,NULL,'detection 1 by link_state: NVLink port 5 inactive');
INSERT INTO events VALUES(1,6,1202000000,'detected',97,NULL,NULL,'detection 2 by xid: Xid 145 (NVLink 5 error): check_nvlink');
INSERT INTO events VALUES(1,7,1220332938,'isolated',97,NULL,NULL,'isolated gpu for detections [1,2]: one GPU explains the symptoms');
INSERT INTO events VALUES(1,8,1220332938,'action',91,NULL,NULL,'drain ok: isolating r01.tray03.gpu2');
INSERT INTO events VALUES(1,9,1220332938,'job',NULL,0,1,'queued steps=0 speed=0 gpus=64 lost_work=20m20.332938s: requeued: r01.tray03.gpu2 isolated: one GPU explains the symptoms');
INSERT INTO events VALUES(1,10,1220332938,'job',NULL,0,1,'restarting steps=0 speed=0 gpus=64: placed on 16 trays');
INSERT INTO events VALUES(1,11,1220332938,'action',NULL,0,NULL,'requeue_job ok: restart from the last checkpoint: r01.tray03.gpu2 isolated: one GPU explains the symptoms');
INSERT INTO events VALUES(1,12,1520332938,'job',NULL,0,NULL,'running steps=0 speed=1 gpus=64: running');
INSERT INTO events VALUES(1,13,1820332938,'action',91,NULL,NULL,'diagnose ok: burn-in check before return to service');
INSERT INTO events VALUES(1,14,1940332938,'action',91,NULL,NULL,'quarantine ok: diagnostic failed (r01.tray03.gpu2 has inactive NVLink ports); next check in 10m');
INSERT INTO events VALUES(1,15,2140000000,'checkpoint',NULL,0,NULL,'checkpoint at step 96.6112');
INSERT INTO events VALUES(1,16,2540332938,'action',91,NULL,NULL,'diagnose ok: burn-in check before return to service');
INSERT INTO events VALUES(1,17,2660332938,'action',91,NULL,NULL,'quarantine ok: diagnostic failed (r01.tray03.gpu2 has inactive NVLink ports); next check in 10m');
INSERT INTO events VALUES(1,18,3000000000,'physics',97,NULL,1,'nvlink_up value=5');
INSERT INTO events VALUES(1,19,3000000000,'fault_reverted',NULL,NULL,1,'reverted: after 30m');
INSERT INTO events VALUES(1,20,3260332938,'action',91,NULL,NULL,'diagnose ok: burn-in check before return to service');
INSERT INTO events VALUES(1,21,3380332938,'action',91,NULL,NULL,'resume ok: diagnostic passed: all checks passed');
INSERT INTO events VALUES(1,22,3940000000,'checkpoint',NULL,0,NULL,'checkpoint at step 396.611');
INSERT INTO events VALUES(1,23,4800000000,'physics',120,NULL,2,'power_cap value=600');
INSERT INTO events VALUES(1,24,4800000000,'job',NULL,0,2,'running steps=546.611 speed=0.819046 gpus=64: speed changed');
INSERT INTO events VALUES(1,25,4800000000,'fault_injected',120,NULL,2,'gpu_throttle on ''r01.tray05.gpu1'': power_cap=600W baseline=1200W');
INSERT INTO events VALUES(1,26,5100000000,'detected',120,NULL,NULL,'detection 3 by straggler: rank slower than the median for 5m');
INSERT INTO events VALUES(1,27,5120000000,'isolated',120,NULL,NULL,'isolated gpu for detections [3]: one GPU explains the symptoms');
INSERT INTO events VALUES(1,28,5120000000,'action',115,NULL,NULL,'drain ok: isolating r01.tray05.gpu1');
INSERT INTO events VALUES(1,29,5120000000,'job',NULL,0,2,'queued steps=396.611 speed=0 gpus=64 lost_work=20m20s: requeued: r01.tray05.gpu1 isolated: one GPU explains the symptoms');
INSERT INTO events VALUES(1,30,5120000000,'job',NULL,0,2,'restarting steps=396.611 speed=0 gpus=64: placed on 16 trays');
INSERT INTO events VALUES(1,31,5120000000,'action',NULL,0,NULL,'requeue_job ok: restart from the last checkpoint: r01.tray05.gpu1 isolated: one GPU explains the symptoms');
INSERT INTO events VALUES(1,32,5420000000,'job',NULL,0,NULL,'running steps=396.611 speed=1 gpus=64: running');
INSERT INTO events VALUES(1,33,5720000000,'action',115,NULL,NULL,'diagnose ok: burn-in check before return to service');
INSERT INTO events VALUES(1,34,5840000000,'action',115,NULL,NULL,'quarantine ok: diagnostic failed (r01.tray05.gpu1 below expected performance (power limited)); next check in 10m');
INSERT INTO events VALUES(1,35,6040000000,'checkpoint',NULL,0,NULL,'checkpoint at step 493.278');
INSERT INTO events VALUES(1,36,6440000000,'action',115,NULL,NULL,'diagnose ok: burn-in check before return to service');
INSERT INTO events VALUES(1,37,6560000000,'action',115,NULL,NULL,'quarantine ok: diagnostic failed (r01.tray05.gpu1 below expected performance (power limited)); next check in 10m');
INSERT INTO events VALUES(1,38,7160000000,'action',115,NULL,NULL,'diagnose ok: burn-in check before return to service');
INSERT INTO events VALUES(1,39,7280000000,'action',115,NULL,NULL,'quarantine ok: diagnostic failed (r01.tray05.gpu1 below expected performance (power limited)); next check in 10m');
INSERT INTO events VALUES(1,40,7840000000,'checkpoint',NULL,0,NULL,'checkpoint at step 793.278');
INSERT INTO events VALUES(1,41,7880000000,'action',115,NULL,NULL,'diagnose ok: burn-in check before return to service');
INSERT INTO events VALUES(1,42,8000000000,'action',115,NULL,NULL,'quarantine ok: diagnostic failed (r01.tray05.gpu1 below expected performance (power limited)); next check in 10m');
INSERT INTO events VALUES(1,43,8400000000,'physics',120,NULL,2,'power_cap value=1200');
INSERT INTO events VALUES(1,44,8400000000,'fault_reverted',NULL,NULL,2,'reverted: after 1h');
INSERT INTO events VALUES(1,45,8600000000,'action',115,NULL,NULL,'diagnose ok: burn-in check before return to service');
INSERT INTO events VALUES(1,46,8720000000,'action',115,NULL,NULL,'resume ok: diagnostic passed: all checks passed');
INSERT INTO events VALUES(1,47,9600000000,'physics',152,NULL,3,'valve_opening value=0.15');
INSERT INTO events VALUES(1,48,9600000000,'fault_injected',152,NULL,3,'valve_fail on ''r01.tray08.valve'': opening=15% baseline=100%');
INSERT INTO events VALUES(1,49,9600232850,'detected',152,NULL,NULL,'detection 4 by thermal: coolant flow 1.2 L/min (nominal 8.0)');
INSERT INTO events VALUES(1,50,9610717937,'physics',155,NULL,3,'thermal_slowdown value=87');
INSERT INTO events VALUES(1,51,9610717937,'job',NULL,0,3,'running steps=1095.06 speed=0.7353 gpus=64: speed changed');
INSERT INTO events VALUES(1,52,9610717937,'physics',156,NULL,3,'thermal_slowdown value=87');
INSERT INTO events VALUES(1,53,9610717937,'physics',157,NULL,3,'thermal_slowdown value=87');
INSERT INTO events VALUES(1,54,9610717937,'physics',158,NULL,3,'thermal_slowdown value=87');
INSERT INTO events VALUES(1,55,9620232850,'isolated',152,NULL,NULL,'isolated valve for detections [4]: coolant flow low');
INSERT INTO events VALUES(1,56,9620232850,'action',151,NULL,NULL,'drain ok: isolating r01.tray08.valve');
INSERT INTO events VALUES(1,57,9620232850,'job',NULL,0,3,'queued steps=793.278 speed=0 gpus=64 lost_work=30m20.23285s: requeued: r01.tray08.valve isolated: coolant flow low');
INSERT INTO events VALUES(1,58,9620232850,'physics',155,NULL,3,'thermal_recovered value=87');
INSERT INTO events VALUES(1,59,9620232850,'physics',156,NULL,3,'thermal_recovered value=87');
INSERT INTO events VALUES(1,60,9620232850,'physics',157,NULL,3,'thermal_recovered value=87');
INSERT INTO events VALUES(1,61,9620232850,'physics',158,NULL,3,'thermal_recovered value=87');
INSERT INTO events VALUES(1,62,9620232850,'job',NULL,0,3,'restarting steps=793.278 speed=0 gpus=64: placed on 16 trays');
INSERT INTO events VALUES(1,63,9620232850,'action',NULL,0,NULL,'requeue_job ok: restart from the last checkpoint: r01.tray08.valve isolated: coolant flow low');
INSERT INTO events VALUES(1,64,9620232850,'detected',155,NULL,NULL,'detection 5 by thermal: temperature 87.0 C');
INSERT INTO events VALUES(1,65,9620232850,'detected',156,NULL,NULL,'detection 6 by thermal: temperature 87.0 C');
INSERT INTO events VALUES(1,66,9620232850,'detected',157,NULL,NULL,'detection 7 by thermal: temperature 87.0 C');
INSERT INTO events VALUES(1,67,9620232850,'detected',158,NULL,NULL,'detection 8 by thermal: temperature 87.0 C');
INSERT INTO events VALUES(1,68,9920232850,'job',NULL,0,NULL,'running steps=793.278 speed=1 gpus=64: running');
INSERT INTO events VALUES(1,69,10220232850,'action',151,NULL,NULL,'diagnose ok: burn-in check before return to service');
INSERT INTO events VALUES(1,70,10340232850,'action',151,NULL,NULL,'quarantine ok: diagnostic failed (thermal test failed: GPUs throttle under load (coolant flow low)); next check in 10m');
INSERT INTO events VALUES(1,71,10940232850,'action',151,NULL,NULL,'diagnose ok: burn-in check before return to service');
INSERT INTO events VALUES(1,72,11060232850,'action',151,NULL,NULL,'quarantine ok: diagnostic failed (thermal test failed: GPUs throttle under load (coolant flow low)); next check in 10m');
INSERT INTO events VALUES(1,73,11660232850,'action',151,NULL,NULL,'diagnose ok: burn-in check before return to service');
INSERT INTO events VALUES(1,74,11740000000,'checkpoint',NULL,0,NULL,'checkpoint at step 1089.91');
INSERT INTO events VALUES(1,75,11780232850,'action',151,NULL,NULL,'quarantine ok: diagnostic failed (thermal test failed: GPUs throttle under load (coolant flow low)); next check in 10m');
INSERT INTO events VALUES(1,76,12300000000,'physics',152,NULL,3,'valve_opening value=1');
INSERT INTO events VALUES(1,77,12300000000,'fault_reverted',NULL,NULL,3,'reverted: after 45m');
INSERT INTO events VALUES(1,78,12380232850,'action',151,NULL,NULL,'diagnose ok: burn-in check before return to service');
INSERT INTO events VALUES(1,79,12500232850,'action',151,NULL,NULL,'resume ok: diagnostic passed: all checks passed');
INSERT INTO events VALUES(1,80,13540000000,'checkpoint',NULL,0,NULL,'checkpoint at step 1389.91');
INSERT INTO events VALUES(1,81,14400000000,'physics',187,NULL,4,'removed value=0');
INSERT INTO events VALUES(1,82,14400000000,'physics',191,NULL,4,'lost value=0');
INSERT INTO events VALUES(1,83,14400000000,'physics',192,NULL,4,'lost value=0');
INSERT INTO events VALUES(1,84,14400000000,'physics',193,NULL,4,'lost value=0');
INSERT INTO events VALUES(1,85,14400000000,'physics',194,NULL,4,'lost value=0');
INSERT INTO events VALUES(1,86,14400000000,'job',NULL,0,4,'hung steps=1539.91 speed=0 gpus=64: r01.tray11.gpu0 is gone');
INSERT INTO events VALUES(1,87,14400000000,'fault_injected',187,NULL,4,'tray_pull on ''r01.tray11'': removed');
INSERT INTO events VALUES(1,88,14423876070,'detected',187,NULL,NULL,'detection 9 by heartbeat: 3 heartbeats missed');
INSERT INTO events VALUES(1,89,14443876070,'isolated',187,NULL,NULL,'isolated compute_tray for detections [9]: node stopped answering');
INSERT INTO events VALUES(1,90,14443876070,'action',187,NULL,NULL,'drain ok: isolating r01.tray11');
INSERT INTO events VALUES(1,91,14443876070,'job',NULL,0,4,'queued steps=1389.91 speed=0 gpus=64 lost_work=15m: requeued: r01.tray11 isolated: node stopped answering');
INSERT INTO events VALUES(1,92,14443876070,'job',NULL,0,4,'restarting steps=1389.91 speed=0 gpus=64: placed on 16 trays');
INSERT INTO events VALUES(1,93,14443876070,'action',NULL,0,NULL,'requeue_job ok: restart from the last checkpoint: r01.tray11 isolated: node stopped answering');
INSERT INTO events VALUES(1,94,14743876070,'job',NULL,0,NULL,'running steps=1389.91 speed=1 gpus=64: running');
INSERT INTO events VALUES(1,95,15043876070,'action',187,NULL,NULL,'diagnose ok: burn-in check before return to service');
INSERT INTO events VALUES(1,96,15163876070,'action',187,NULL,NULL,'quarantine ok: diagnostic failed (node unreachable); next check in 10m');
INSERT INTO events VALUES(1,97,15763876070,'action',187,NULL,NULL,'diagnose ok: burn-in check before return to service');
INSERT INTO events VALUES(1,98,15883876070,'action',187,NULL,NULL,'quarantine ok: diagnostic failed (node unreachable); next check in 10m');
INSERT INTO events VALUES(1,99,16483876070,'action',187,NULL,NULL,'diagnose ok: burn-in check before return to service');
INSERT INTO events VALUES(1,100,16583876070,'checkpoint',NULL,0,NULL,'checkpoint at step 1689.91');
INSERT INTO events VALUES(1,101,16603876070,'action',187,NULL,NULL,'quarantine ok: diagnostic failed (node unreachable); next check in 10m');
INSERT INTO events VALUES(1,102,17203876070,'action',187,NULL,NULL,'diagnose ok: burn-in check before return to service');
INSERT INTO events VALUES(1,103,17323876070,'action',187,NULL,NULL,'quarantine ok: diagnostic failed (node unreachable); next check in 10m');
INSERT INTO events VALUES(1,104,17923876070,'action',187,NULL,NULL,'diagnose ok: burn-in check before return to service');
INSERT INTO events VALUES(1,105,18000000000,'physics',187,NULL,4,'inserted value=0');
INSERT INTO events VALUES(1,106,18000000000,'fault_reverted',NULL,NULL,4,'reverted: after 1h');
INSERT INTO events VALUES(1,107,18043876070,'action',187,NULL,NULL,'quarantine ok: diagnostic failed (node unreachable); next check in 10m');
INSERT INTO events VALUES(1,108,18300000000,'physics',191,NULL,NULL,'booted value=0');
INSERT INTO events VALUES(1,109,18300000000,'physics',192,NULL,NULL,'booted value=0');
INSERT INTO events VALUES(1,110,18300000000,'physics',193,NULL,NULL,'booted value=0');
INSERT INTO events VALUES(1,111,18300000000,'physics',194,NULL,NULL,'booted value=0');
INSERT INTO events VALUES(1,112,18383876070,'checkpoint',NULL,0,NULL,'checkpoint at step 1989.91');
INSERT INTO events VALUES(1,113,18643876070,'action',187,NULL,NULL,'diagnose ok: burn-in check before return to service');
INSERT INTO events VALUES(1,114,18763876070,'action',187,NULL,NULL,'resume ok: diagnostic passed: all checks passed');
INSERT INTO events VALUES(1,115,20183876070,'checkpoint',NULL,0,NULL,'checkpoint at step 2289.91');
INSERT INTO events VALUES(2,1,1000000,'fault_injected',5,NULL,3,'link_down on ''r01.nvs1.port7'' port 7');
INSERT INTO events VALUES(2,2,1000000,'fault_injected',NULL,NULL,NULL,'x on '''': a''b');
INSERT INTO events VALUES(2,3,2000000,'fault_reverted',NULL,NULL,3,'reverted');
INSERT INTO events VALUES(2,4,2000000,'fault_reverted',NULL,NULL,NULL,'reverted: orphan');
INSERT INTO events VALUES(2,5,3000000,'physics',NULL,NULL,NULL,'temp value=1.23457e+06');
INSERT INTO events VALUES(2,6,3000000,'physics',1,NULL,3,'temp value=1.23457e-05');
INSERT INTO events VALUES(2,7,3000000,'physics',1,NULL,3,'temp value=inf');
INSERT INTO events VALUES(2,8,3000000,'physics',1,NULL,3,'temp value=-inf');
INSERT INTO events VALUES(2,9,3000000,'physics',1,NULL,3,'temp value=1e+21');
INSERT INTO events VALUES(2,10,3000000,'physics',1,NULL,3,'temp value=-2.5e-07');
INSERT INTO events VALUES(2,11,3000000,'physics',1,NULL,3,'temp value=100000');
INSERT INTO events VALUES(2,12,3000000,'physics',1,NULL,3,'temp value=0.3');
INSERT INTO events VALUES(2,13,4000000,'detected',NULL,NULL,NULL,'detection 0 by xid: ');
INSERT INTO events VALUES(2,14,5000000,'isolated',NULL,NULL,NULL,'isolated rack for detections []: ');
INSERT INTO events VALUES(2,15,5000000,'isolated',2,NULL,NULL,'isolated gpu for detections [4,5,6]: r');
INSERT INTO events VALUES(2,16,6000000,'action',2,1,NULL,'gpu_reset FAILED: timeout');
INSERT INTO events VALUES(2,17,6000000,'action',NULL,NULL,NULL,'alert FAILED');
INSERT INTO events VALUES(2,18,7000000,'job',NULL,1,3,'restarting steps=12.75 speed=0 gpus=8 lost_work=1d2h3m4.005006s');
INSERT INTO events VALUES(2,19,7000000,'job',NULL,1,NULL,'failed steps=1e-09 speed=0 gpus=8 lost_work=500ms: oom');
INSERT INTO events VALUES(2,20,7000000,'job',NULL,1,NULL,'finished steps=3 speed=0.666667 gpus=8 lost_work=3ms');
INSERT INTO events VALUES(2,21,7000000,'job',NULL,1,NULL,'queued steps=3 speed=1 gpus=8 lost_work=1h');
INSERT INTO events VALUES(2,22,7000000,'job',NULL,1,NULL,'queued steps=3 speed=1 gpus=8 lost_work=0.000001s');
INSERT INTO events VALUES(2,23,7000000,'job',NULL,1,NULL,'queued steps=3 speed=1 gpus=8 lost_work=1m');
INSERT INTO events VALUES(2,24,7000000,'job',NULL,1,NULL,'queued steps=3 speed=1 gpus=8 lost_work=1d');
INSERT INTO events VALUES(2,25,8000000,'checkpoint',NULL,NULL,NULL,'checkpoint at step 1.23457e+08');
CREATE TABLE faults(
  run_id INTEGER NOT NULL, seq INTEGER NOT NULL, fault_id INTEGER NOT NULL, kind TEXT NOT NULL,
  target_id INTEGER, port INTEGER, selector TEXT NOT NULL, detail TEXT NOT NULL,
  injected_us INTEGER NOT NULL, reverted_us INTEGER, revert_detail TEXT,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
INSERT INTO faults VALUES(1,4,1,'link_down',97,5,'r01.tray03.gpu2.nvlink5','state=down baseline=up',1200000000,3000000000,'after 30m');
INSERT INTO faults VALUES(1,25,2,'gpu_throttle',120,NULL,'r01.tray05.gpu1','power_cap=600W baseline=1200W',4800000000,8400000000,'after 1h');
INSERT INTO faults VALUES(1,48,3,'valve_fail',152,NULL,'r01.tray08.valve','opening=15% baseline=100%',9600000000,12300000000,'after 45m');
INSERT INTO faults VALUES(1,87,4,'tray_pull',187,NULL,'r01.tray11','removed',14400000000,18000000000,'after 1h');
INSERT INTO faults VALUES(2,1,3,'link_down',5,7,'r01.nvs1.port7','',1000000,2000000,'');
INSERT INTO faults VALUES(2,2,0,'x',NULL,NULL,'','a''b',1000000,2000000,'orphan');
CREATE TABLE detections(
  run_id INTEGER NOT NULL, seq INTEGER NOT NULL, t_us INTEGER NOT NULL, detection_id INTEGER,
  detector TEXT NOT NULL, component_id INTEGER, symptom TEXT NOT NULL,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
INSERT INTO detections VALUES(1,5,1200332938,1,'link_state',97,'NVLink port 5 inactive');
INSERT INTO detections VALUES(1,6,1202000000,2,'xid',97,'Xid 145 (NVLink 5 error): check_nvlink');
INSERT INTO detections VALUES(1,26,5100000000,3,'straggler',120,'rank slower than the median for 5m');
INSERT INTO detections VALUES(1,49,9600232850,4,'thermal',152,'coolant flow 1.2 L/min (nominal 8.0)');
INSERT INTO detections VALUES(1,64,9620232850,5,'thermal',155,'temperature 87.0 C');
INSERT INTO detections VALUES(1,65,9620232850,6,'thermal',156,'temperature 87.0 C');
INSERT INTO detections VALUES(1,66,9620232850,7,'thermal',157,'temperature 87.0 C');
INSERT INTO detections VALUES(1,67,9620232850,8,'thermal',158,'temperature 87.0 C');
INSERT INTO detections VALUES(1,88,14423876070,9,'heartbeat',187,'3 heartbeats missed');
INSERT INTO detections VALUES(2,13,4000000,NULL,'xid',NULL,'');
CREATE TABLE isolations(
  run_id INTEGER NOT NULL, seq INTEGER NOT NULL, t_us INTEGER NOT NULL, component_id INTEGER,
  domain TEXT NOT NULL, detection_ids TEXT NOT NULL, reason TEXT NOT NULL,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
INSERT INTO isolations VALUES(1,7,1220332938,97,'gpu','1,2','one GPU explains the symptoms');
INSERT INTO isolations VALUES(1,27,5120000000,120,'gpu','3','one GPU explains the symptoms');
INSERT INTO isolations VALUES(1,55,9620232850,152,'valve','4','coolant flow low');
INSERT INTO isolations VALUES(1,89,14443876070,187,'compute_tray','9','node stopped answering');
INSERT INTO isolations VALUES(2,14,5000000,NULL,'rack','','');
INSERT INTO isolations VALUES(2,15,5000000,2,'gpu','4,5,6','r');
CREATE TABLE actions(
  run_id INTEGER NOT NULL, seq INTEGER NOT NULL, t_us INTEGER NOT NULL, action TEXT NOT NULL,
  component_id INTEGER, job_id INTEGER, ok INTEGER NOT NULL, detail TEXT NOT NULL,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
INSERT INTO actions VALUES(1,8,1220332938,'drain',91,NULL,1,'isolating r01.tray03.gpu2');
INSERT INTO actions VALUES(1,11,1220332938,'requeue_job',NULL,0,1,'restart from the last checkpoint: r01.tray03.gpu2 isolated: one GPU explains the symptoms');
INSERT INTO actions VALUES(1,13,1820332938,'diagnose',91,NULL,1,'burn-in check before return to service');
INSERT INTO actions VALUES(1,14,1940332938,'quarantine',91,NULL,1,'diagnostic failed (r01.tray03.gpu2 has inactive NVLink ports); next check in 10m');
INSERT INTO actions VALUES(1,16,2540332938,'diagnose',91,NULL,1,'burn-in check before return to service');
INSERT INTO actions VALUES(1,17,2660332938,'quarantine',91,NULL,1,'diagnostic failed (r01.tray03.gpu2 has inactive NVLink ports); next check in 10m');
INSERT INTO actions VALUES(1,20,3260332938,'diagnose',91,NULL,1,'burn-in check before return to service');
INSERT INTO actions VALUES(1,21,3380332938,'resume',91,NULL,1,'diagnostic passed: all checks passed');
INSERT INTO actions VALUES(1,28,5120000000,'drain',115,NULL,1,'isolating r01.tray05.gpu1');
INSERT INTO actions VALUES(1,31,5120000000,'requeue_job',NULL,0,1,'restart from the last checkpoint: r01.tray05.gpu1 isolated: one GPU explains the symptoms');
INSERT INTO actions VALUES(1,33,5720000000,'diagnose',115,NULL,1,'burn-in check before return to service');
INSERT INTO actions VALUES(1,34,5840000000,'quarantine',115,NULL,1,'diagnostic failed (r01.tray05.gpu1 below expected performance (power limited)); next check in 10m');
INSERT INTO actions VALUES(1,36,6440000000,'diagnose',115,NULL,1,'burn-in check before return to service');
INSERT INTO actions VALUES(1,37,6560000000,'quarantine',115,NULL,1,'diagnostic failed (r01.tray05.gpu1 below expected performance (power limited)); next check in 10m');
INSERT INTO actions VALUES(1,38,7160000000,'diagnose',115,NULL,1,'burn-in check before return to service');
INSERT INTO actions VALUES(1,39,7280000000,'quarantine',115,NULL,1,'diagnostic failed (r01.tray05.gpu1 below expected performance (power limited)); next check in 10m');
INSERT INTO actions VALUES(1,41,7880000000,'diagnose',115,NULL,1,'burn-in check before return to service');
INSERT INTO actions VALUES(1,42,8000000000,'quarantine',115,NULL,1,'diagnostic failed (r01.tray05.gpu1 below expected performance (power limited)); next check in 10m');
INSERT INTO actions VALUES(1,45,8600000000,'diagnose',115,NULL,1,'burn-in check before return to service');
INSERT INTO actions VALUES(1,46,8720000000,'resume',115,NULL,1,'diagnostic passed: all checks passed');
INSERT INTO actions VALUES(1,56,9620232850,'drain',151,NULL,1,'isolating r01.tray08.valve');
INSERT INTO actions VALUES(1,63,9620232850,'requeue_job',NULL,0,1,'restart from the last checkpoint: r01.tray08.valve isolated: coolant flow low');
INSERT INTO actions VALUES(1,69,10220232850,'diagnose',151,NULL,1,'burn-in check before return to service');
INSERT INTO actions VALUES(1,70,10340232850,'quarantine',151,NULL,1,'diagnostic failed (thermal test failed: GPUs throttle under load (coolant flow low)); next check in 10m');
INSERT INTO actions VALUES(1,71,10940232850,'diagnose',151,NULL,1,'burn-in check before return to service');
INSERT INTO actions VALUES(1,72,11060232850,'quarantine',151,NULL,1,'diagnostic failed (thermal test failed: GPUs throttle under load (coolant flow low)); next check in 10m');
INSERT INTO actions VALUES(1,73,11660232850,'diagnose',151,NULL,1,'burn-in check before return to service');
INSERT INTO actions VALUES(1,75,11780232850,'quarantine',151,NULL,1,'diagnostic failed (thermal test failed: GPUs throttle under load (coolant flow low)); next check in 10m');
INSERT INTO actions VALUES(1,78,12380232850,'diagnose',151,NULL,1,'burn-in check before return to service');
INSERT INTO actions VALUES(1,79,12500232850,'resume',151,NULL,1,'diagnostic passed: all checks passed');
INSERT INTO actions VALUES(1,90,14443876070,'drain',187,NULL,1,'isolating r01.tray11');
INSERT INTO actions VALUES(1,93,14443876070,'requeue_job',NULL,0,1,'restart from the last checkpoint: r01.tray11 isolated: node stopped answering');
INSERT INTO actions VALUES(1,95,15043876070,'diagnose',187,NULL,1,'burn-in check before return to service');
INSERT INTO actions VALUES(1,96,15163876070,'quarantine',187,NULL,1,'diagnostic failed (node unreachable); next check in 10m');
INSERT INTO actions VALUES(1,97,15763876070,'diagnose',187,NULL,1,'burn-in check before return to service');
INSERT INTO actions VALUES(1,98,15883876070,'quarantine',187,NULL,1,'diagnostic failed (node unreachable); next check in 10m');
INSERT INTO actions VALUES(1,99,16483876070,'diagnose',187,NULL,1,'burn-in check before return to service');
INSERT INTO actions VALUES(1,101,16603876070,'quarantine',187,NULL,1,'diagnostic failed (node unreachable); next check in 10m');
INSERT INTO actions VALUES(1,102,17203876070,'diagnose',187,NULL,1,'burn-in check before return to service');
INSERT INTO actions VALUES(1,103,17323876070,'quarantine',187,NULL,1,'diagnostic failed (node unreachable); next check in 10m');
INSERT INTO actions VALUES(1,104,17923876070,'diagnose',187,NULL,1,'burn-in check before return to service');
INSERT INTO actions VALUES(1,107,18043876070,'quarantine',187,NULL,1,'diagnostic failed (node unreachable); next check in 10m');
INSERT INTO actions VALUES(1,113,18643876070,'diagnose',187,NULL,1,'burn-in check before return to service');
INSERT INTO actions VALUES(1,114,18763876070,'resume',187,NULL,1,'diagnostic passed: all checks passed');
INSERT INTO actions VALUES(2,16,6000000,'gpu_reset',2,1,0,'timeout');
INSERT INTO actions VALUES(2,17,6000000,'alert',NULL,NULL,0,'');
CREATE TABLE job_events(
  run_id INTEGER NOT NULL, seq INTEGER NOT NULL, t_us INTEGER NOT NULL, job_id INTEGER,
  state TEXT NOT NULL, steps REAL NOT NULL, step_time_s REAL NOT NULL, speed REAL NOT NULL,
  gpus INTEGER NOT NULL, lost_work_us INTEGER NOT NULL, cause_fault_id INTEGER, detail TEXT NOT NULL,
  trays TEXT NOT NULL,  -- component ids of the trays it runs on, comma-separated
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
INSERT INTO job_events VALUES(1,1,0,0,'running',0.0,5.9999999999999991118,1.000000000000000222,64,0,NULL,'running','67,79,91,103,115,127,139,151,163,175,187,199,211,223,235,247');
INSERT INTO job_events VALUES(1,3,1200000000,0,'running',200.00000000000002842,6.0352941176470586981,0.99415204678362578682,64,0,1,'speed changed','67,79,91,103,115,127,139,151,163,175,187,199,211,223,235,247');
INSERT INTO job_events VALUES(1,9,1220332938,0,'queued',0.0,0.0,0.0,64,1220332938,1,'requeued: r01.tray03.gpu2 isolated: one GPU explains the symptoms','67,79,91,103,115,127,139,151,163,175,187,199,211,223,235,247');
INSERT INTO job_events VALUES(1,10,1220332938,0,'restarting',0.0,0.0,0.0,64,0,1,'placed on 16 trays','67,79,103,115,127,139,151,163,175,187,199,211,223,235,247,259');
INSERT INTO job_events VALUES(1,12,1520332938,0,'running',0.0,5.9999999999999991118,1.000000000000000222,64,0,NULL,'running','67,79,103,115,127,139,151,163,175,187,199,211,223,235,247,259');
INSERT INTO job_events VALUES(1,24,4800000000,0,'running',546.61117700000011153,7.3255973544638512962,0.81904583471870739952,64,0,2,'speed changed','67,79,103,115,127,139,151,163,175,187,199,211,223,235,247,259');
INSERT INTO job_events VALUES(1,29,5120000000,0,'queued',396.6111770000000547,0.0,0.0,64,1220000000,2,'requeued: r01.tray05.gpu1 isolated: one GPU explains the symptoms','67,79,103,115,127,139,151,163,175,187,199,211,223,235,247,259');
INSERT INTO job_events VALUES(1,30,5120000000,0,'restarting',396.6111770000000547,0.0,0.0,64,0,2,'placed on 16 trays','67,79,91,103,127,139,151,163,175,187,199,211,223,235,247,259');
INSERT INTO job_events VALUES(1,32,5420000000,0,'running',396.6111770000000547,5.9999999999999991118,1.000000000000000222,64,0,NULL,'running','67,79,91,103,127,139,151,163,175,187,199,211,223,235,247,259');
INSERT INTO job_events VALUES(1,51,9610717937,0,'running',1095.0641665000000557,8.1599363741120498616,0.73529985099337369369,64,0,3,'speed changed','67,79,91,103,127,139,151,163,175,187,199,211,223,235,247,259');
INSERT INTO job_events VALUES(1,57,9620232850,0,'queued',793.27784366666674029,0.0,0.0,64,1820232850,3,'requeued: r01.tray08.valve isolated: coolant flow low','67,79,91,103,127,139,151,163,175,187,199,211,223,235,247,259');
INSERT INTO job_events VALUES(1,62,9620232850,0,'restarting',793.27784366666674029,0.0,0.0,64,0,3,'placed on 16 trays','67,79,91,103,115,127,139,163,175,187,199,211,223,235,247,259');
INSERT INTO job_events VALUES(1,68,9920232850,0,'running',793.27784366666674029,5.9999999999999991118,1.000000000000000222,64,0,NULL,'running','67,79,91,103,115,127,139,163,175,187,199,211,223,235,247,259');
INSERT INTO job_events VALUES(1,86,14400000000,0,'hung',1539.9057020000000193,0.0,0.0,64,0,4,'r01.tray11.gpu0 is gone','67,79,91,103,115,127,139,163,175,187,199,211,223,235,247,259');
INSERT INTO job_events VALUES(1,91,14443876070,0,'queued',1389.9057020000000193,0.0,0.0,64,900000000,4,'requeued: r01.tray11 isolated: node stopped answering','67,79,91,103,115,127,139,163,175,187,199,211,223,235,247,259');
INSERT INTO job_events VALUES(1,92,14443876070,0,'restarting',1389.9057020000000193,0.0,0.0,64,0,4,'placed on 16 trays','67,79,91,103,115,127,139,151,163,175,199,211,223,235,247,259');
INSERT INTO job_events VALUES(1,94,14743876070,0,'running',1389.9057020000000193,5.9999999999999991118,1.000000000000000222,64,0,NULL,'running','67,79,91,103,115,127,139,151,163,175,199,211,223,235,247,259');
INSERT INTO job_events VALUES(2,18,7000000,1,'restarting',12.749999999999999999,0.0,0.0,8,93784005006,3,'','');
INSERT INTO job_events VALUES(2,19,7000000,1,'failed',1.0000000000000000622e-09,0.0,0.0,8,500000,NULL,'oom','1');
INSERT INTO job_events VALUES(2,20,7000000,1,'finished',3.0,0.0,0.66666666666666662965,8,3000,NULL,'','');
INSERT INTO job_events VALUES(2,21,7000000,1,'queued',3.0,0.0,1.0,8,3600000000,NULL,'','');
INSERT INTO job_events VALUES(2,22,7000000,1,'queued',3.0,0.0,1.0,8,1,NULL,'','');
INSERT INTO job_events VALUES(2,23,7000000,1,'queued',3.0,0.0,1.0,8,60000000,NULL,'','');
INSERT INTO job_events VALUES(2,24,7000000,1,'queued',3.0,0.0,1.0,8,86400000000,NULL,'','');
CREATE TABLE checkpoints(
  run_id INTEGER NOT NULL, seq INTEGER NOT NULL, t_us INTEGER NOT NULL, job_id INTEGER,
  step REAL NOT NULL, PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
INSERT INTO checkpoints VALUES(1,15,2140000000,0,96.611177000000012073);
INSERT INTO checkpoints VALUES(1,22,3940000000,0,396.6111770000000547);
INSERT INTO checkpoints VALUES(1,35,6040000000,0,493.27784366666674029);
INSERT INTO checkpoints VALUES(1,40,7840000000,0,793.27784366666674029);
INSERT INTO checkpoints VALUES(1,74,11740000000,0,1089.9057020000000192);
INSERT INTO checkpoints VALUES(1,80,13540000000,0,1389.9057020000000193);
INSERT INTO checkpoints VALUES(1,100,16583876070,0,1689.9057020000000193);
INSERT INTO checkpoints VALUES(1,112,18383876070,0,1989.9057020000000193);
INSERT INTO checkpoints VALUES(1,115,20183876070,0,2289.9057020000000192);
INSERT INTO checkpoints VALUES(2,25,8000000,NULL,123456789.0);
CREATE TABLE physics(
  run_id INTEGER NOT NULL, seq INTEGER NOT NULL, t_us INTEGER NOT NULL, component_id INTEGER,
  what TEXT NOT NULL, value REAL NOT NULL, cause_fault_id INTEGER,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
INSERT INTO physics VALUES(1,2,1200000000,97,'nvlink_down',5.0,1);
INSERT INTO physics VALUES(1,18,3000000000,97,'nvlink_up',5.0,1);
INSERT INTO physics VALUES(1,23,4800000000,120,'power_cap',600.0,2);
INSERT INTO physics VALUES(1,43,8400000000,120,'power_cap',1200.0,2);
INSERT INTO physics VALUES(1,47,9600000000,152,'valve_opening',0.14999999999999999444,3);
INSERT INTO physics VALUES(1,50,9610717937,155,'thermal_slowdown',87.000001787669248186,3);
INSERT INTO physics VALUES(1,52,9610717937,156,'thermal_slowdown',87.000001787669248186,3);
INSERT INTO physics VALUES(1,53,9610717937,157,'thermal_slowdown',87.000001787669248186,3);
INSERT INTO physics VALUES(1,54,9610717937,158,'thermal_slowdown',87.000001787669248186,3);
INSERT INTO physics VALUES(1,58,9620232850,155,'thermal_recovered',87.000001477888545767,3);
INSERT INTO physics VALUES(1,59,9620232850,156,'thermal_recovered',87.000001477888545767,3);
INSERT INTO physics VALUES(1,60,9620232850,157,'thermal_recovered',87.000001477888545767,3);
INSERT INTO physics VALUES(1,61,9620232850,158,'thermal_recovered',87.000001477888545767,3);
INSERT INTO physics VALUES(1,76,12300000000,152,'valve_opening',1.0,3);
INSERT INTO physics VALUES(1,81,14400000000,187,'removed',0.0,4);
INSERT INTO physics VALUES(1,82,14400000000,191,'lost',0.0,4);
INSERT INTO physics VALUES(1,83,14400000000,192,'lost',0.0,4);
INSERT INTO physics VALUES(1,84,14400000000,193,'lost',0.0,4);
INSERT INTO physics VALUES(1,85,14400000000,194,'lost',0.0,4);
INSERT INTO physics VALUES(1,105,18000000000,187,'inserted',0.0,4);
INSERT INTO physics VALUES(1,108,18300000000,191,'booted',0.0,NULL);
INSERT INTO physics VALUES(1,109,18300000000,192,'booted',0.0,NULL);
INSERT INTO physics VALUES(1,110,18300000000,193,'booted',0.0,NULL);
INSERT INTO physics VALUES(1,111,18300000000,194,'booted',0.0,NULL);
INSERT INTO physics VALUES(2,5,3000000,NULL,'temp',1234567.0,NULL);
INSERT INTO physics VALUES(2,6,3000000,1,'temp',1.2345677999999999199e-05,3);
INSERT INTO physics VALUES(2,7,3000000,1,'temp',1e999,3);
INSERT INTO physics VALUES(2,8,3000000,1,'temp',-1e999,3);
INSERT INTO physics VALUES(2,9,3000000,1,'temp',1.0e+21,3);
INSERT INTO physics VALUES(2,10,3000000,1,'temp',-2.4999999999999998868e-07,3);
INSERT INTO physics VALUES(2,11,3000000,1,'temp',100000.5,3);
INSERT INTO physics VALUES(2,12,3000000,1,'temp',0.3000000000000000444,3);
CREATE TABLE fault_metrics(
  run_id INTEGER NOT NULL, ord INTEGER NOT NULL, fault_id INTEGER NOT NULL, kind TEXT NOT NULL,
  target TEXT NOT NULL, injected_us INTEGER NOT NULL, reverted_us INTEGER,
  ttd_us INTEGER, tti_us INTEGER, ttr_us INTEGER,
  gpus_direct INTEGER NOT NULL, gpus_collateral INTEGER NOT NULL,
  jobs_touched INTEGER NOT NULL, jobs_interrupted INTEGER NOT NULL,
  gpu_hours_lost REAL NOT NULL, rework_us INTEGER NOT NULL,
  isolated TEXT NOT NULL,  -- component names, comma-separated
  PRIMARY KEY(run_id, ord));
INSERT INTO fault_metrics VALUES(1,0,1,'link_down','r01.tray03.gpu2.nvlink5',1200000000,3000000000,332938,20332938,320332938,1,63,1,1,27.030255005692005454,1220332938,'r01.tray03.gpu2');
INSERT INTO fault_metrics VALUES(1,1,2,'gpu_throttle','r01.tray05.gpu1',4800000000,8400000000,300000000,320000000,620000000,1,63,1,1,28.051650362489134239,1220000000,'r01.tray05.gpu1');
INSERT INTO fault_metrics VALUES(1,2,3,'valve_fail','r01.tray08.valve',9600000000,12300000000,232850,20232850,320232850,4,60,1,1,37.737803535802399324,1820232850,'r01.tray08.valve');
INSERT INTO fault_metrics VALUES(1,3,4,'tray_pull','r01.tray11',14400000000,18000000000,23876070,43876070,343876070,4,60,1,1,22.113352355555555561,900000000,'r01.tray11');
CREATE TABLE job_impacts(
  run_id INTEGER NOT NULL, ord INTEGER NOT NULL, fault_id INTEGER NOT NULL, job_id INTEGER,
  job_name TEXT NOT NULL, interrupted INTEGER NOT NULL, stalled_us INTEGER NOT NULL,
  rework_us INTEGER NOT NULL, slowdown_hours REAL NOT NULL, gpu_hours_lost REAL NOT NULL,
  PRIMARY KEY(run_id, ord));
INSERT INTO job_impacts VALUES(1,0,1,0,'pretrain-64',1,300000000,1220332938,3.3029463937621519984e-05,27.030255005692005454);
INSERT INTO job_impacts VALUES(1,1,2,0,'pretrain-64',1,300000000,1220000000,0.016084814691670452913,28.051650362489134239);
INSERT INTO job_impacts VALUES(1,2,3,0,'pretrain-64',1,300000000,1820232850,0.00069961080246807943149,37.737803535802399324);
INSERT INTO job_impacts VALUES(1,3,4,0,'pretrain-64',1,343876070,900000000,0.0,22.113352355555555561);
CREATE TABLE job_metrics(
  run_id INTEGER NOT NULL, ord INTEGER NOT NULL, job_id INTEGER, name TEXT NOT NULL,
  gpus INTEGER NOT NULL, wall_us INTEGER NOT NULL, productive_us INTEGER NOT NULL,
  ettr REAL NOT NULL, goodput REAL NOT NULL, interruptions INTEGER NOT NULL, steps REAL NOT NULL,
  PRIMARY KEY(run_id, ord));
INSERT INTO job_metrics VALUES(1,0,0,'pretrain-64',64,21600000000,15195558142,0.70349806212962961993,0.70349806212962973095,4,2532.5930236666667951);
CREATE TABLE run_metrics(
  run_id INTEGER NOT NULL, name TEXT NOT NULL, value REAL NOT NULL, PRIMARY KEY(run_id, name));
INSERT INTO run_metrics VALUES(1,'isolations',4.0);
INSERT INTO run_metrics VALUES(1,'correct_isolations',4.0);
INSERT INTO run_metrics VALUES(1,'precision',1.0);
INSERT INTO run_metrics VALUES(1,'recall',1.0);
INSERT INTO run_metrics VALUES(1,'false_isolations',0.0);
INSERT INTO run_metrics VALUES(1,'missed_faults',0.0);
CREATE TABLE run_metric_items(
  run_id INTEGER NOT NULL, list TEXT NOT NULL CHECK(list IN ('false_isolation', 'missed_fault')),
  ord INTEGER NOT NULL, item TEXT NOT NULL, PRIMARY KEY(run_id, list, ord));
CREATE TABLE gates(
  run_id INTEGER NOT NULL, ord INTEGER NOT NULL, text TEXT NOT NULL, metric TEXT NOT NULL,
  op TEXT NOT NULL, value REAL NOT NULL, actual REAL, passed INTEGER NOT NULL,
  message TEXT NOT NULL, PRIMARY KEY(run_id, ord));
INSERT INTO gates VALUES(1,0,'ttd.max < 10m','ttd.max','<',600.0,300.0,1,'ttd.max < 10m: 5.0m (pass)');
INSERT INTO gates VALUES(1,1,'ttr.max < 30m','ttr.max','<',1800.0,620.0,1,'ttr.max < 30m: 10.3m (pass)');
INSERT INTO gates VALUES(1,2,'healer.precision == 1','healer.precision','==',1.0,1.0,1,'healer.precision == 1: 1 (pass)');
INSERT INTO gates VALUES(1,3,'healer.recall == 1','healer.recall','==',1.0,1.0,1,'healer.recall == 1: 1 (pass)');
INSERT INTO gates VALUES(1,4,'ettr.min >= 0.6','ettr.min','>=',0.59999999999999997779,0.70349806212962961993,1,'ettr.min >= 0.6: 0.7035 (pass)');
CREATE INDEX components_by_name ON components(run_id, name);
CREATE INDEX components_by_serial ON components(serial);
CREATE INDEX faults_by_id ON faults(run_id, fault_id);
CREATE VIEW event_log AS
  SELECT e.run_id, e.seq, e.t_us, e.t_us / 1e6 AS t_s, e.type, c.name AS component, j.name AS job,
         e.fault_id, e.detail
  FROM events e
  LEFT JOIN components c ON c.run_id = e.run_id AND c.id = e.component_id
  LEFT JOIN jobs j ON j.run_id = e.run_id AND j.id = e.job_id;
CREATE VIEW fault_timeline AS
  SELECT f.run_id, f.fault_id, f.kind, c.name AS target, f.port, f.selector,
         f.injected_us / 1e6 AS injected_s, f.reverted_us / 1e6 AS reverted_s, f.detail
  FROM faults f LEFT JOIN components c ON c.run_id = f.run_id AND c.id = f.target_id;
CREATE VIEW fault_summary AS
  SELECT m.run_id, m.fault_id, m.kind, m.target, c.kind AS target_kind, c.serial AS target_serial,
         m.injected_us / 1e6 AS injected_s, m.ttd_us / 1e6 AS ttd_s, m.tti_us / 1e6 AS tti_s,
         m.ttr_us / 1e6 AS ttr_s, m.gpus_direct, m.gpus_collateral,
         m.gpus_direct + m.gpus_collateral AS gpus_total, m.jobs_touched, m.jobs_interrupted,
         m.gpu_hours_lost, m.rework_us / 1e6 AS rework_s, m.isolated
  FROM fault_metrics m LEFT JOIN components c ON c.run_id = m.run_id AND c.name = m.target;
CREATE VIEW job_summary AS
  SELECT run_id, job_id, name, gpus, wall_us / 1e6 AS wall_s, productive_us / 1e6 AS productive_s,
         round(ettr * 100, 1) AS ettr_pct, round(goodput * 100, 1) AS goodput_pct, interruptions,
         steps
  FROM job_metrics;
CREATE VIEW run_summary AS
  SELECT r.id AS run_id, r.plan_name, r.seed, r.backend, r.version, r.status, r.exit_code,
         r.started_wall, r.ended_wall,
         (SELECT count(*) FROM faults f WHERE f.run_id = r.id) AS faults,
         (SELECT value FROM run_metrics m WHERE m.run_id = r.id AND m.name = 'precision') AS precision,
         (SELECT value FROM run_metrics m WHERE m.run_id = r.id AND m.name = 'recall') AS recall
  FROM runs r;
COMMIT;
PRAGMA user_version = 2;
PRAGMA application_id = 1380141138;
