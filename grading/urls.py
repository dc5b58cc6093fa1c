"""Pages of the grading app: each module contributes its own patterns."""

from grading.views import adjudication, agreement, oversight, sessions, workspace

urlpatterns = [
    *workspace.urlpatterns,
    *sessions.urlpatterns,
    *adjudication.urlpatterns,
    *agreement.urlpatterns,
    *oversight.urlpatterns,
]
