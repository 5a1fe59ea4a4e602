"""A toy kind for model subjects: is the word a colour? (tests/support/kinds/README.md)"""
