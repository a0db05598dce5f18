"""Training: the paper's recipe (section 5), resumable, observable and distributed."""
