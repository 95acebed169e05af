"""HTTP views (flask-smorest blueprints)."""
