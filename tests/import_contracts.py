"""An import-linter contract type the project's own rules need: ``private_modules`` forbids the named
packages to import another package's private modules (a module path with a component starting with
``_``), which import-linter's wildcards cannot express. Registered in pyproject.toml
(``contract_types``); ``make test`` runs it with the other contracts (``lint-imports``)."""

from __future__ import annotations

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output


def _area(module: str) -> str:
    """The package a module belongs to: ``agcore.<area>``, or ``agcore.integrations.<name>``."""
    parts = module.split(".")
    return ".".join(parts[:3] if len(parts) > 2 and parts[1] == "integrations" else parts[:2])


def _private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split(".")[1:])


class PrivateModulesContract(Contract):
    """``source_modules`` (and everything under them) import no other package's private modules;
    ``allowed_modules`` are project-wide internals anyone may use."""

    source_modules = fields.ListField(subfield=fields.StringField())
    allowed_modules = fields.ListField(subfield=fields.StringField(), required=False, default=[])

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        found = []
        for source in self.source_modules:
            for importer in sorted({source, *graph.find_descendants(source)}):
                for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                    if (imported.startswith("agcore.") and _private(imported)
                            and _area(imported) != _area(importer) and imported not in self.allowed_modules):
                        found.append((importer, imported))
        return ContractCheck(kept=not found, metadata={"found": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for importer, imported in check.metadata["found"]:
            output.print_error(
                f"{importer} imports the private module {imported}: import its package's public name"
            )
