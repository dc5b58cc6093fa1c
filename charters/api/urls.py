"""REST endpoints of Layer 1 under /api/v1/, one module per concern."""

from charters.api import audit, charters, configurations, task_sets, use_cases

urlpatterns = [
    *use_cases.urlpatterns,
    *audit.urlpatterns,
    *charters.urlpatterns,
    *configurations.urlpatterns,
    *task_sets.urlpatterns,
]
