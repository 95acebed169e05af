"""Services: one transaction per public function."""
