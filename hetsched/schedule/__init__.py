"""Task schedules (Hare_Sched's x, s, C): the data classes, their JSON files, the one
independent validator that recomputes the objective, and semi-active re-timing."""
