"""The command line: `fakeapi serve`, `fakeapi explain`, `fakeapi log`, `fakeapi clock`,
`fakeapi snapshot`.

Imports: anything (it sits at the top, with the composition root below it)."""
