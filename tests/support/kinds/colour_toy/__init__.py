"""A toy kind for people: is the word a colour? (tests/support/kinds/README.md)"""
