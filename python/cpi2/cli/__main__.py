from cpi2.cli.main import entry

entry()
