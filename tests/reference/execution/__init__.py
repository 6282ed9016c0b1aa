"""The tests of the execution layer (reference.execution): the children every command starts its fresh processes
as."""
