"""Stand-alone scripts run in a child interpreter (so a hang or crash cannot take us down).

Each uses only the standard library (plus pynvml for nvml_probe) and prints one JSON object.
"""
