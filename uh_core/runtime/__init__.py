"""Running one mission on one runtime in one sandbox, observed live, with evidence."""
