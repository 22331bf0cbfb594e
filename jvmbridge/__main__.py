from jvmbridge.cli import main

main(prog_name="jvmbridge")
