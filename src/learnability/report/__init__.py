"""The report: figures as data (`panels`), their rendering (`render`) and the HTML / Markdown / JSON
claims report (`html`). Import the submodule you need; this package imports nothing heavy."""
