"""The registry: one generic store path for every kind, plus what each kind's row names.

`rest` holds the row type (`Kind`) and the interfaces a row's behaviour implements (the
object and subresource strategies, the handler types HTTP dispatches on); `kinds` is the
table of rows above the strategies that implement them (`core`, `pods`, `workloads`,
`resource`, `scheduling`, `rbac`, `identity`, `emulator`, `custom`, with the defaulters of
`workload_defaults` and the rules of `validation`); `custom_kinds` makes the rows a CRD
serves; `reviews` answers the review kinds; `generic` is the store path every write and read
takes, `listing` its pages.

Imports: the core below it (machinery, cel, storage, schema, printers, patching, auth, kube).
"""
