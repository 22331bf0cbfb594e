"""`report`: saved runs side by side. history puts every row of every run in one frame and compares
each configuration across the runs (with compare's ratios); columns names the layouts a report's
columns can take. The saved files are read by jvmbridge.saved; the figure is drawn by
jvmbridge.render.plot."""
