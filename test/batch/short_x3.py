#!/usr/bin/env python3
"""Writes a short X3 mission (take off to 2 m, 2 m east, land) made from worlds/x3_mission.sdf:
usage short_x3.py REPO OUT.sdf. The batch tests fly it so that a run takes well under a second."""
import re
import sys

repo, out = sys.argv[1], sys.argv[2]
text = open(f"{repo}/worlds/x3_mission.sdf").read()
short, n = re.subn(r'<takeoff altitude="5"/>.*?<land/>',
                   '<takeoff altitude="2"/>\n        <waypoint>2 0 2</waypoint>\n        <land/>',
                   text, flags=re.S)
if n != 1:
    sys.exit("short_x3.py: the mission of worlds/x3_mission.sdf is not the one expected")
open(out, "w").write(short)
