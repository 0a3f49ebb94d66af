"""A small real workspace on disk for the code tests: Python, TypeScript and a Markdown file."""

from __future__ import annotations

import os
from pathlib import Path

FILES = {
    "shop/models.py": '''"""Shop domain types."""

from dataclasses import dataclass


@dataclass
class Invoice:
    """An invoice with its lines."""

    number: str
    total_cents: int

    def add_line(self, description: str, cents: int) -> None:
        def helper() -> None:
            pass
        self.total_cents += cents


def parse_amount(text: str) -> int:
    return int(float(text) * 100)
''',
    "shop/billing.py": '''from shop.models import Invoice, parse_amount


def charge_customer(invoice: Invoice, card_token: str) -> bool:
    """Charge the card for the invoice total through the payment gateway."""
    amount = parse_amount(str(invoice.total_cents / 100))
    return amount > 0 and bool(card_token)


def refund(invoice: Invoice) -> Invoice:
    return Invoice(invoice.number, -invoice.total_cents)
''',
    "shop/reports.py": '''from shop.models import Invoice


def monthly_revenue(invoices: list[Invoice]) -> int:
    """Sum every invoice of the month."""
    return sum(i.total_cents for i in invoices)
''',
    "web/client.ts": '''export class ApiClient {
  constructor(private baseUrl: string) {}
  async fetchInvoices(customerId: string): Promise<string[]> {
    return [];
  }
}

export function retryWithBackoff(attempts: number): number {
  return attempts * 2;
}
''',
    "docs/guide.md": "# Guide\n\nHow to export invoices as CSV for the accountant.\n\n"
                     "Run the exporter nightly.\n",
}


def write_workspace(root: Path, files: dict[str, str] | None = None) -> Path:
    """Write ``files`` (default ``FILES``) under ``root``; returns ``root``."""
    for relative, text in (FILES if files is None else files).items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def touch_later(path: Path, text: str) -> None:
    """Rewrite ``path`` with ``text`` and a later mtime, so a change is seen even when the
    filesystem's clock is coarse and the size happens to match."""
    before = path.stat().st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 2_000_000_000, before + 2_000_000_000))
