"""Files the project writes and reads back: atomic writes (:mod:`sm_env.files.atomic`: temporary file, fsync,
rename, for records, configs, checkpoints, policies and results) and bounded JSON reads
(:mod:`sm_env.files.json_files`: size, depth, digits, finite numbers). Standard library only: the ground floor
beside the rules core."""
