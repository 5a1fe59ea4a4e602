"""Twins: the model as a model of the people: likelihood of the people's answers (`answers`), the same effects
(`effects`), item by item (`items`), reading ΔLL (`reading_dll`), and the report section (`report`)."""
