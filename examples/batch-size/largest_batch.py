"""The largest training batch that fits the GPU memory this container may use.

Under gpufleet's memory cap (a gpufleet.io/gpu-milli share) torch.cuda.mem_get_info()
reports the share's cap as the total and what is left of it as free; on a MIG device it
reports the instance's memory. Either way, size the batch from what is free, not from
torch.cuda.get_device_properties(0).total_memory (the most the container may hold, not
what is left of it).

Usage: python largest_batch.py [--margin 0.1] [--max-batch 65536]
Replace build() and step() with your model and training step.
"""
import argparse
import gc

import torch


def build():
    model = torch.nn.Sequential(
        torch.nn.Linear(4096, 8192), torch.nn.ReLU(),
        torch.nn.Linear(8192, 8192), torch.nn.ReLU(),
        torch.nn.Linear(8192, 1000)).cuda()
    return model, torch.optim.AdamW(model.parameters())


def step(model, opt, batch):
    x = torch.randn(batch, 4096, device="cuda")
    y = torch.randint(0, 1000, (batch,), device="cuda")
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()


def usable_bytes():
    """Free memory a step may take: the driver's free (the cap's, the MIG
    instance's) plus what PyTorch's allocator holds but does not use."""
    gc.collect()
    torch.cuda.empty_cache()
    free, total = torch.cuda.mem_get_info()
    cached = torch.cuda.memory_reserved() - torch.cuda.memory_allocated()
    return free + cached, total


def fits(model, opt, batch, budget):
    """One forward + backward + optimizer step at `batch`: True if it ran
    and its peak stayed within `budget` bytes above what was allocated."""
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    try:
        step(model, opt, batch)
    except torch.cuda.OutOfMemoryError:
        opt.zero_grad(set_to_none=True)
        return False
    finally:
        gc.collect()
        torch.cuda.empty_cache()
    return torch.cuda.max_memory_allocated() - base <= budget


def largest_batch(model, opt, margin, max_batch):
    step(model, opt, 1)  # optimizer state and library workspaces exist from now on
    usable, total = usable_bytes()
    budget = int(usable * (1.0 - margin))
    print(f"cuMemGetInfo: total {total / 2**30:.2f} GiB, usable {usable / 2**30:.2f} GiB, "
          f"budget for a step {budget / 2**30:.2f} GiB (margin {margin:.0%})")
    if not fits(model, opt, 1, budget):
        return 0
    lo, hi = 1, 2
    while hi <= max_batch and fits(model, opt, hi, budget):  # double until it does not fit
        lo, hi = hi, hi * 2
    hi = min(hi, max_batch + 1)
    while hi - lo > 1:  # lo fits, hi does not
        mid = (lo + hi) // 2
        if fits(model, opt, mid, budget):
            lo = mid
        else:
            hi = mid
    return lo


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--margin", type=float, default=0.1,
                    help="share of the usable memory kept free (fragmentation, other processes)")
    ap.add_argument("--max-batch", type=int, default=65536)
    args = ap.parse_args()
    model, opt = build()
    batch = largest_batch(model, opt, args.margin, args.max_batch)
    print(f"largest batch: {batch}")
    # The trial steps trained on random data: load your checkpoint (or build
    # the model again) before the real training.
    # ... train with `batch`; call largest_batch() again if the container's
    # other processes start or stop using the GPU.


if __name__ == "__main__":
    main()
