"""The ground floor: errors, deadlines, progress, JSON in and out, tables, validation reports,
scaling, the shipped files, executors and the one run store. It imports nothing else of
hetsched; every other package may import it."""
