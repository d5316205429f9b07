"""Files the project writes and reads back: atomic writes (:mod:`sm_env.files.atomic`: temporary file, fsync,
rename, for records, configs, checkpoints, policies and results), bounded JSON reads and the one JSON writer
(:mod:`sm_env.files.json_files`: size, values, depth, digits, finite numbers) and the one check of an output
path (:mod:`sm_env.files.paths`). Standard library only: the ground floor beside the rules core."""
