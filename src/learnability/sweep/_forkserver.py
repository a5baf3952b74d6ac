"""Preloaded by the local pool's forkserver, and only there: the forkserver dies with its driver.

Importing this module anywhere else does nothing (`guard_forkserver` checks that the importing
process's parent is the driver that started the pool).
"""

from learnability.sweep.executors import guard_forkserver

guard_forkserver()
