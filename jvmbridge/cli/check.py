"""`jvmbridge check` (placeholder while it is built)."""
import click


@click.command()
def check():
    """Is AES acceleration really on, on this server and in its running JVMs?"""
